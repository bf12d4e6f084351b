// Found by the audit: a `models` entry whose defaultReasoningEffort its model does not list (a typo,
// `hgih`, or `medium`, which DeepSeek has not) was sent unchecked on every request that named no
// effort — each failing at DeepSeek with a 400 that does not point at the config — and one on a
// model that lists no efforts was dropped without a word. Both now fail the plugin as it loads.
import { Context } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import LlmRuntime from '@rein/llm'
import { describe, expect, it } from 'vitest'
import * as deepseek from '../src/index.ts'

async function load(models: deepseek.Config['models']) {
  const root = new Context()
  await root.plugin(LlmRuntime)
  try {
    await root.plugin(deepseek, { apiKeyEnv: false, models })
    return root.llm.resolveModel('deepseek', models[0]!.id)
  } catch (error) {
    return isReinError(error) ? { code: error.code, message: error.message } : error
  }
}

describe('a default reasoning effort the model does not list', () => {
  it('fails the load with CONFIG_INVALID, naming the entry and the efforts there are: a built-in model', async () => {
    expect(await load([{ id: 'deepseek-v4-pro', defaultReasoningEffort: 'medium' }])).toEqual({
      code: 'CONFIG_INVALID',
      message: 'models[0] (deepseek-v4-pro): defaultReasoningEffort "medium" is not one of its reasoning efforts (off, low, high, max)',
    })
  })

  it('fails the load with CONFIG_INVALID: efforts of the entry itself', async () => {
    expect(await load([{ id: 'mine', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'hgih' }])).toMatchObject({
      code: 'CONFIG_INVALID',
      message: 'models[0] (mine): defaultReasoningEffort "hgih" is not one of its reasoning efforts (low, high)',
    })
  })

  it('fails the load with CONFIG_INVALID: a model that lists no efforts, where it would be dropped', async () => {
    expect(await load([{ id: 'deepseek-chat', defaultReasoningEffort: 'high' }])).toEqual({
      code: 'CONFIG_INVALID',
      message: 'models[0] (deepseek-chat): defaultReasoningEffort "high" needs reasoningEfforts listing it; the model lists none',
    })
  })

  it('loads a default the model lists', async () => {
    expect(await load([{ id: 'mine', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'high' }])).toEqual({ id: 'mine', reasoning: { efforts: ['low', 'high'], default: 'high' } })
  })
})
