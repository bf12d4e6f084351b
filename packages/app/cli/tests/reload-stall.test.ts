// `rein chat` and an edit adding a row that takes long to start, or never finishes: the chat says
// what it waits for, a line typed meanwhile is told it waits (and is sent, or said not sent), and
// leaving never hangs or ends with Node's bare exit 13.
import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { chatTerminal, projectPerTest, terminalRein } from './harness.ts'

const setUp = projectPerTest(afterEach)

/** A row whose start waits for `globalThis.releaseSlowRow` (a test in this process may call it); in another process it never finishes. */
const SLOW_ROW = [
  'export const name = "slow-row"',
  'export async function apply() {',
  '  await new Promise((resolve) => { globalThis.releaseSlowRow = resolve })',
  '}',
].join('\n')

function addSlowRow(dir: string, id = 'slow'): void {
  const file = id === 'slow' ? 'slow-row.mjs' : `slow-row-${id}.mjs`
  writeFileSync(join(dir, file), SLOW_ROW.replaceAll('releaseSlowRow', releaseName(id)))
  appendFileSync(join(dir, 'cordis.yml'), [`- id: ${id}`, `  name: ./${file}`, ''].join('\n'))
}

/** A row whose start never finishes while it keeps a timer running: Node's event loop never runs empty. */
const TIMER_ROW = [
  'export const name = "timer-row"',
  'export async function apply() {',
  '  setInterval(() => {}, 1000)',
  '  await new Promise(() => {})',
  '}',
].join('\n')

function addTimerRow(dir: string): void {
  writeFileSync(join(dir, 'timer-row.mjs'), TIMER_ROW)
  appendFileSync(join(dir, 'cordis.yml'), ['- id: ticking', '  name: ./timer-row.mjs', ''].join('\n'))
}

const releaseName = (id: string) => (id === 'slow' ? 'releaseSlowRow' : `releaseSlowRow_${id}`)
const release = (id: string) => (Reflect.get(globalThis, releaseName(id)) as (() => void) | undefined)?.()

/** A chat (slow reloads told after 50 ms) that has had one turn; its next line is answered "Second.". */
async function chatAfterOneTurn() {
  const p = await setUp([{ steps: [{ text: 'First.' }] }, { steps: [{ text: 'Second.' }] }])
  const chat = chatTerminal(p.dir, [], { REIN_SLOW_START_MS: '50' })
  await expect.poll(chat.screen).toContain('Ctrl-D leaves')
  chat.type('one\r')
  await expect.poll(chat.answer).toContain('First.')
  return { p, chat }
}

describe('rein chat: a reload whose new row takes long to start', () => {
  it('says which row it waits for, tells a line typed meanwhile that it waits, and sends it once the row has started', async () => {
    const { p, chat } = await chatAfterOneTurn()
    addSlowRow(p.dir)
    await expect.poll(chat.screen).toContain('cordis.yml is still reloading after 50 ms: row "slow" (./slow-row.mjs) has not finished starting')
    chat.type('two\r')
    await expect.poll(chat.screen).toContain('this line is sent once the cordis.yml reload under way is done')
    expect(chat.answer()).not.toContain('Second.')
    release('slow')
    await expect.poll(chat.answer).toContain('Second.')
    expect(chat.screen()).toContain('cordis.yml reloaded, in effect from the next turn: added slow')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 30_000)

  it('holds a line that waits for one reload until a save made meanwhile is applied too: it never meets rows restarting', async () => {
    const { p, chat } = await chatAfterOneTurn()
    addSlowRow(p.dir, 'a')
    await expect.poll(chat.screen).toContain('row "a" (./slow-row-a.mjs) has not finished starting')
    chat.type('two\r')
    await expect.poll(chat.screen).toContain('this line is sent once the cordis.yml reload under way is done')
    // Saved again while the first reload still waits for its row: past the pause that makes one save of an editor's writes.
    addSlowRow(p.dir, 'b')
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    release('a')
    await expect.poll(chat.screen).toContain('row "b" (./slow-row-b.mjs) has not finished starting')
    expect(p.server.requests).toHaveLength(1)
    release('b')
    await expect.poll(chat.answer).toContain('Second.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 30_000)

  it('leaves at Ctrl-C when the row never finishes starting: the waiting line said not sent, the reload given up, and a normal exit', async () => {
    const { p, chat } = await stuckWith(addSlowRow, 'has not finished starting')
    try {
      chat.type('\u0003')
      expect(await chat.done).toBe(0)
      const screen = chat.screen()
      expect(screen).toContain('not sent: RELOAD_PENDING: the chat was left while the cordis.yml reload was still under way')
      expect(screen).toContain('your message was not sent to the model nor saved in the session: two')
      expect(screen).toContain('cordis.yml\'s reload never finished, so the chat leaves without it')
      expect(screen).toContain('row "slow" (./slow-row.mjs): never finished starting')
      expect(p.server.requests).toHaveLength(1)
    } finally {
      chat.kill()
    }
  }, 60_000)
})

/** Ctrl-C while leaving waits for the stuck reload: exit 130, the reload given up in its own words (not the turn's), the waiting line never sent. */
async function leavesWithoutReload(chat: Awaited<ReturnType<typeof stuckWith>>['chat'], p: Awaited<ReturnType<typeof stuckWith>>['p']) {
  chat.type('\u0003')
  expect(await chat.done).toBe(130)
  expect(chat.screen()).toContain('cordis.yml\'s reload never finished, so the chat leaves without it')
  expect(chat.screen()).not.toContain('press Ctrl-C again to quit without waiting')
  expect(p.server.requests).toHaveLength(1)
}

/** A real chat on a pty that had one turn, then an edit adding a row (`add`) told stuck (`told`), and a line typed that waits for it. */
async function stuckWith(add: (dir: string) => void, told: string) {
  const p = await setUp([{ steps: [{ text: 'First.' }] }, { steps: [{ text: 'never sent' }] }])
  const chat = terminalRein(p.dir, ['chat'], { REIN_SLOW_START_MS: '50' })
  try {
    await expect.poll(chat.screen, { timeout: 15_000 }).toContain('Ctrl-D leaves')
    chat.type('one\r')
    await expect.poll(chat.screen).toContain('First.')
    add(p.dir)
    await expect.poll(chat.screen).toContain(told)
    chat.type('two\r')
    await expect.poll(chat.screen).toContain('this line is sent once')
  } catch (error) {
    chat.kill()
    throw error
  }
  return { p, chat }
}

describe('rein chat: a reload whose new row never finishes starting and keeps a timer running', () => {
  const stuckWithLineWaiting = () => stuckWith(addTimerRow, 'row "ticking" (./timer-row.mjs) has not finished starting')

  it('leaving at Ctrl-C says it waits for the stuck row and the second Ctrl-C leaves without it', async () => {
    const { p, chat } = await stuckWithLineWaiting()
    try {
      chat.type('\u0003')
      await expect.poll(chat.screen).toContain('Ctrl-C again leaves without it')
      const leaving = chat.screen()
      expect(leaving).toContain('not sent: RELOAD_PENDING: the chat was left while the cordis.yml reload was still under way')
      expect(leaving).toMatch(/leaving once .*row "ticking" \(\.\/timer-row\.mjs\) has not finished starting/)
      await leavesWithoutReload(chat, p)
    } finally {
      chat.kill()
    }
  }, 60_000)

  it('at Ctrl-D with a line waiting for it, says what the line waits for and leaves at Ctrl-C without sending it', async () => {
    const { p, chat } = await stuckWithLineWaiting()
    try {
      chat.type('\u0004')
      await expect.poll(chat.screen).toContain('Ctrl-C leaves without sending it')
      expect(chat.screen()).toMatch(/input ended: .*row "ticking" \(\.\/timer-row\.mjs\) has not finished starting/)
      await leavesWithoutReload(chat, p)
      expect(chat.screen()).toContain('not sent: RELOAD_PENDING: the chat was left while the cordis.yml reload was still under way')
      expect(chat.screen()).toContain('your message was not sent to the model nor saved in the session: two')
    } finally {
      chat.kill()
    }
  }, 60_000)
})

describe('rein chat: a save made while the chat was still starting', () => {
  it('is applied once the chat is up, not missed until the next save', async () => {
    const p = await setUp([{ steps: [{ text: 'First.' }] }])
    // A row that saves the file as it starts: after the load read it, before the chat's watch began.
    writeFileSync(join(p.dir, 'noop.mjs'), 'export const name = "noop"\nexport function apply() {}\n')
    writeFileSync(join(p.dir, 'saves-file.mjs'), [
      'import { appendFileSync } from "node:fs"',
      'export const name = "saves-file"',
      'export function apply(_ctx, config) { appendFileSync(config.file, "- id: later\\n  name: ./noop.mjs\\n") }',
    ].join('\n'))
    appendFileSync(join(p.dir, 'cordis.yml'), ['- id: saver', '  name: ./saves-file.mjs', `  config: { file: '${join(p.dir, 'cordis.yml')}' }`, ''].join('\n'))
    const chat = chatTerminal(p.dir)
    await expect.poll(chat.screen).toContain('cordis.yml reloaded, in effect from the next turn: added later')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  })
})
