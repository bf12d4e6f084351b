/**
 * What the mock model does in suite 7, by which prompt it was sent: the main and the capture runs
 * call every tool with markers in their arguments (a write, a bash command that also prints the
 * environment its commands get, a read of a planted file, a read that fails, a memory write, a bash
 * command whose output is spilled, one that times out) and then answer with a marker; the failing run gets a 401 whose body echoes
 * the key; the first resume a stream event that is the key alone; the second resume (and the capture
 * run) a 500 whose body echoes the key and a marker, then an in-stream error that does the same
 * (two retries, see composition.ts), then what they ask for.
 */

import type { MockReply, RecordedRequest } from '@rein/testkit'
import type { Markers } from './markers.ts'

/** The file the suite plants in the workspace for the model to read; it holds the `toolResult` marker. */
export const SEED_FILE = 'seed.txt'

/** The workspace files the agent writes in a run tagged `tag` (the only files it may put content in, besides the seed). */
export function agentFiles(tag: string): string[] {
  return [`notes-${tag}.txt`, `bash-${tag}.txt`]
}

interface WireMessage { role: string; content?: unknown }

/** The mock server's script for every process of the suite. */
export function leakyModel(markers: Markers): (request: RecordedRequest) => MockReply {
  const m = markers.byName
  const [spilledName, ...spilledTail] = m.spilledResult.replace(/^LEAKMARK-/, '').split('-')
  const spilled = { name: spilledName, tail: spilledTail.join('-') }
  const seen = new Map<string, number>()
  const nth = (scenario: string) => {
    const n = seen.get(scenario) ?? 0
    seen.set(scenario, n + 1)
    return n
  }
  const error500: MockReply = {
    kind: 'error', status: 500, type: 'server_error',
    message: `internal error while serving key ${markers.apiKey} for request "${m.echo500}"`,
  }
  const streamError: MockReply = {
    steps: [{ error: { message: `upstream rejected key ${markers.apiKey} on "${m.echoStream}"`, type: 'server_error' } }],
  }
  // A stream event that is no chunk at all: a JSON string, the key.
  const keyEvent: MockReply = { steps: [{ event: markers.apiKey }] }
  /** What the server sends on the `n`th request of a scenario that fails first, each time with the key. */
  const failing = (n: number, replies: readonly MockReply[]) => replies[n]
  return (request) => {
    const messages = ((request.body as { messages?: WireMessage[] } | undefined)?.messages) ?? []
    const lastUser = [...messages].reverse().find((message) => message.role === 'user')
    const said = typeof lastUser?.content === 'string' ? lastUser.content : JSON.stringify(lastUser?.content ?? '')
    const toolsDone = messages.at(-1)?.role === 'tool'
    if (said.includes(m.failingPrompt)) {
      return {
        kind: 'error', status: 401, type: 'invalid_request_error', code: 'invalid_api_key',
        message: `Incorrect API key provided: ${markers.apiKey}. Your request "${m.echo401}" was not served.`,
      }
    }
    if (said.includes(m.resumePrompt)) {
      // The first resume ends on the key event (not retried); the second retries through the rest.
      const failed = failing(nth('resume'), [keyEvent, error500, streamError])
      if (failed) return failed
      return { steps: [{ text: `Resumed: ${m.resumeAnswer}` }] }
    }
    const tag = said.includes(m.capturePrompt) ? 'capture' : said.includes(m.prompt) ? 'main' : undefined
    if (tag === undefined) return { kind: 'error', status: 400, message: 'the leak suite\'s model got a prompt it does not know' }
    if (toolsDone) return { steps: [{ text: `All done: ${m.answer}` }] }
    // The capture run's first attempts fail too, so errors with the key in them meet captureContent.
    const failed = tag === 'capture' ? failing(nth('capture'), [error500, streamError]) : undefined
    if (failed) return failed
    const [notes, bashOut] = agentFiles(tag) as [string, string]
    const call = (id: string, name: string, args: Record<string, unknown>) => ({ toolCall: { id: `${id}-${tag}`, name, arguments: JSON.stringify(args) } })
    return {
      steps: [
        call('write', 'write', { path: notes, content: `notes: ${m.writeArg}\n` }),
        call('bash', 'bash', { command: `echo ${m.bashArg} > ${bashOut} && cat ${bashOut} && env | sort`, description: 'Write a file and list the environment' }),
        call('read', 'read', { path: SEED_FILE }),
        call('missing', 'read', { path: `missing-${m.missingPathArg}.txt` }),
        call('memory', 'memory_write', { scope: 'project', type: 'fact', content: `The build uses ${m.memoryArg}.` }),
        // Output past tool-bash's preview limit: saved whole in the session's spill folder. The marker
        // is made by the command, so it is in its output only, not in its arguments.
        call('spill', 'bash', { command: `seq 1 5000; printf 'LEAKMARK-%s-%s\\n' ${spilled.name} ${spilled.tail}`, description: 'Print a lot' }),
        // Stopped by its timeout: the stop and its notice go through the error paths.
        call('fail', 'bash', { command: `echo ${m.failingBashArg} >&2; sleep 30`, description: 'Fail on purpose', timeout_ms: 300 }),
      ],
    }
  }
}
