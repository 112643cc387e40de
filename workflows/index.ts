export { pingWorkflow } from './ping.workflow';
export { jobWorkflow } from './job.workflow';
export { batchWorkflow } from './batch.workflow';
export { jobCloseoutWorkflow } from './closeout.workflow';
export { jobNotifierWorkflow } from './notifier.workflow';
export { summaryCallsWorkflow } from './summary-calls.workflow';
