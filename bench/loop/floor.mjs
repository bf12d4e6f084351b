// @ts-check
/**
 * The floor: the bare loop issue #16 names. `fetch`, eventsource-parser, JSON.parse per event, the
 * tool calls assembled from their deltas and called directly, history kept in an array. No
 * validation, no persistence, no retries: every harness is measured as a multiple of this. The
 * same loop over `node:http` (floor-http.mjs) costs less: on Node 20 fetch is not the cheapest transport.
 *
 * With a fourth argument `durable`, the floor also keeps a log as rein's session-jsonl does, and no
 * more: a new file per conversation (its folder fsynced once), the messages since the last save
 * appended as JSON lines at each point rein saves its log, and fsynced where rein fsyncs (not before
 * the replay-safe lookup's body). It shows what those writes and fsyncs cost on the machine, apart
 * from any harness.
 */

import { closeSync, fdatasyncSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EventSourceParserStream } from 'eventsource-parser/stream'
import { API_KEY, MODEL, TOOL_DESCRIPTION, TOOL_NAME, TOOL_PARAMETERS, addDelta, args, handWrittenLoop, runLoop } from './common.mjs'

const { baseURL, scenario, turns } = args()
const tools = [{ type: 'function', function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters: TOOL_PARAMETERS } }]

/** One streamed request: the text and the tool calls it answered with. */
async function complete(/** @type {object[]} */ messages) {
  const response = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ model: MODEL, messages, tools, stream: true, stream_options: { include_usage: true } }),
  })
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`)
  const answer = { content: '', calls: /** @type {import('./common.mjs').AssembledCall[]} */ ([]) }
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())
  for await (const event of events) {
    if (event.data === '[DONE]') break
    const delta = JSON.parse(event.data).choices[0]?.delta
    if (delta) addDelta(answer, delta)
  }
  return answer
}

const conversation = handWrittenLoop(complete, process.argv[5] === 'durable' ? durableLog() : undefined)

await runLoop({ scenario, turns, conversation })

/** A log per conversation: a new file, then the new messages appended at each save, and fsynced when asked. */
function durableLog() {
  // Kept until the runner is done, as rein.mjs keeps its sessions.
  const kept = process.env.REIN_BENCH_TMP
  const folder = mkdtempSync(join(kept ?? tmpdir(), 'floor-bench-'))
  if (!kept) process.on('exit', () => rmSync(folder, { recursive: true, force: true }))
  let count = 0
  /** @type {number | undefined} */
  let open
  return () => {
    if (open !== undefined) closeSync(open)
    const fd = openSync(join(folder, `${count++}.jsonl`), 'wx', 0o600)
    open = fd
    let saved = 0
    let synced = false
    return {
      save: (/** @type {any[]} */ messages, /** @type {boolean} */ sync) => {
        let lines = ''
        for (; saved < messages.length; saved++) lines += `${JSON.stringify(messages[saved])}\n`
        writeSync(fd, lines)
        if (!sync) return
        fdatasyncSync(fd)
        if (synced) return
        // The file's name is durable once its folder is.
        const dir = openSync(folder, 'r')
        fsyncSync(dir)
        closeSync(dir)
        synced = true
      },
    }
  }
}
