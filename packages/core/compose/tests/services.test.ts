// A row waiting for a rein service is told which package provides it: every service is in the map.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { packageFor } from '../src/services.ts'

const PACKAGES = join(import.meta.dirname, '..', '..', '..')

/** Every rein service: `super(ctx, '<name>')` in a package's source, with the package's name. */
function services(): { service: string; pkg: string }[] {
  return readdirSync(PACKAGES).flatMap((group) => readdirSync(join(PACKAGES, group), { withFileTypes: true }).flatMap((entry) => {
    if (!entry.isDirectory()) return []
    const root = join(PACKAGES, group, entry.name)
    const pkg = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string }).name
    let files: string[]
    try {
      files = readdirSync(join(root, 'src')).filter((name) => name.endsWith('.ts'))
    } catch {
      return []
    }
    return files.flatMap((file) => [...readFileSync(join(root, 'src', file), 'utf8').matchAll(/super\(ctx, '([a-z]+)'\)/g)].map((match) => ({ service: match[1]!, pkg })))
  }))
}

describe('which package provides a service', () => {
  it('knows every service rein\'s packages register', () => {
    const found = services()
    expect(found.length).toBeGreaterThanOrEqual(9)
    for (const { service, pkg } of found) expect(`${service} → ${packageFor(service)}`).toBe(`${service} → ${pkg}`)
  })
})
