export { pingWorkflow } from './ping.workflow';
