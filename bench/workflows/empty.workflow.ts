/** The raw baseline's workflow: nothing but one workflow task. */
export async function emptyWorkflow(): Promise<void> {}
