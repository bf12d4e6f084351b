// Shared setup for composition tests: a temp folder per test, the fixtures' lifecycle log, failures as data.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach } from 'vitest'
import { isReinError } from '@rein/base'
import { loadComposition, type Composition, type CompositionOptions } from '../src/index.ts'

export const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url))

/**
 * Folders that resolve real rein plugins the way a project that installed them would: each
 * package's node_modules holds its dependencies, and a package resolves its own name.
 */
export const installed = {
  llmOpenai: fileURLToPath(new URL('../../../llm/llm-openai/', import.meta.url)),
  sessionJsonl: fileURLToPath(new URL('../../../store/session-jsonl/', import.meta.url)),
}

export interface Failure {
  code: string
  message: string
  problems: unknown
  cause: unknown
}

export function useComposition() {
  let dir = ''
  let loaded: Composition | undefined
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rein-compose-'))
    ;(globalThis as Record<string, unknown>).composeLog = []
  })
  afterEach(async () => {
    await loaded?.dispose()
    loaded = undefined
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    dir: () => dir,
    /** What the fixture plugins recorded: `start …` and `stop …`, in order. */
    log: () => (globalThis as Record<string, unknown>).composeLog as string[],
    /** Writes the file, with `FIXTURES/` standing for the fixtures folder. */
    writeConfig: (text: string, name = 'cordis.yml') => {
      const file = join(dir, name)
      writeFileSync(file, text.replaceAll('FIXTURES/', fixtures))
      return file
    },
    load: async (file: string, options: Omit<CompositionOptions, 'file'> = {}) => {
      loaded = await loadComposition({ file, ...options })
      return loaded
    },
    failure: async (file: string, options: Omit<CompositionOptions, 'file'> = {}): Promise<Failure> => {
      try {
        loaded = await loadComposition({ file, ...options })
      } catch (error) {
        if (!isReinError(error)) throw error
        return { code: error.code, message: error.message, problems: error.details?.problems, cause: error.cause }
      }
      throw new Error('expected the load to fail')
    },
    dispose: async () => {
      await loaded?.dispose()
      loaded = undefined
    },
  }
}

/** The rejection of `promise` as data; fails the test when it resolves or throws something else. */
export async function rejection(promise: Promise<unknown>): Promise<Failure> {
  try {
    await promise
  } catch (error) {
    if (!isReinError(error)) throw error
    return { code: error.code, message: error.message, problems: error.details?.problems, cause: error.cause }
  }
  throw new Error('expected a rejection')
}
