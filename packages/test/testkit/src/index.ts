/** @rein/testkit: what rein's own tests use, and yours can: a mock OpenAI-compatible server, a scripted LLM, an OTLP capture endpoint, a link flipper and a zombie. */

export { startMockOpenAiServer, type MockServer } from './mock-server.ts'
export type {
  MockScript, MockReply, MockStreamReply, MockErrorReply, MockHttpReply, MockContextOverflowReply, MockModelNotFoundReply,
  MockBodyFaults, MockServerKind, MockWrongShape, MockStep, MockUsage, MockReplyRecord, RecordedRequest,
} from './mock-script.ts'
export {
  createScriptedLlm, ScriptedLlm,
  type ScriptedLlmScript, type ScriptedLlmOptions, type ScriptedTurn, type ScriptedStep,
} from './scripted-llm.ts'
/** Every invariant a rein session log keeps (see the README); returns the violations found. */
export { validateSessionInvariants } from './invariants.ts'
/** Temp folders and things to close, cleaned up after each test. */
export { tempFolders, type TempFolders } from './temp-folders.ts'
/** Closes the agents a test made after it and fails it when a log breaks an invariant. */
export { checkedAgents, type CheckedAgent } from './invariants.ts'
/** The `ToolRun` a tool body gets inside an agent, for testing a tool package on its own. */
export { toolContextFixture, type ToolContextOverrides } from './tool-context.ts'
/** Loads a package's plugin from a cordis.yml in a temporary folder, as a user's project would, cleaned up after each test. */
export { useCordisYml, type CordisYmlFixture } from './cordis-yml.ts'
/** Writes what a process killed mid-call leaves in a log: a turn whose calls have intents and no results. */
export { appendOpenCalls, type OpenCall } from './crashed-log.ts'
/** A seeded random generator in [0, 1), for repeatable fuzz and kill-point tests. */
export { seededRandom } from './seeded-random.ts'
/** A real OTLP/HTTP endpoint on 127.0.0.1 that records every export and answers as a test's mode says. */
export { startOtlpCapture, type OtlpCapture, type OtlpCaptureMode, type CapturedExport } from './otlp-capture.ts'
/** A base URL on 127.0.0.1 where nothing listens, for a test of an endpoint that is down. */
export { closedLoopbackUrl } from './otlp-capture.ts'
/** A process that swaps names between a real folder or file and a symbolic link until stopped, for race tests. */
export { startLinkFlipper, type LinkFlip, type LinkFlipper } from './link-flipper.ts'
/** A process that has exited and is never reaped (a zombie), for testing code that asks whether a pid still runs. */
export { startZombie, type Zombie } from './zombie.ts'
/** Waits for a line a process prints, then kills it with SIGKILL: a real kill at a point it names. */
export { killWhenPrinted } from './kill-at.ts'
