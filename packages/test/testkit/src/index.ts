/** @rein/testkit: what rein's own tests use, and yours can: a mock OpenAI-compatible server and a scripted LLM. */

export { startMockOpenAiServer, type MockServer } from './mock-server.ts'
export type {
  MockScript, MockReply, MockStreamReply, MockErrorReply, MockStep, MockUsage, RecordedRequest,
} from './mock-script.ts'
export {
  createScriptedLlm, ScriptedLlm,
  type ScriptedLlmScript, type ScriptedLlmOptions, type ScriptedTurn, type ScriptedStep,
} from './scripted-llm.ts'
export { validateSessionInvariants } from './invariants.ts'
