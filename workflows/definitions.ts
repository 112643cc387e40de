/** Inputs, outputs and messages shared by workflows, the API and the worker. Types and message definitions only. */

export interface PingResult {
  /** Which task queue answered each activity, proving a worker polls each queue. */
  io: string;
  media: string;
}

export interface PingInput {
  ioQueue: string;
  mediaQueue: string;
}
