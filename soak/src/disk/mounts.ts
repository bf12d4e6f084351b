/**
 * Small file systems for the disk suite (root only): a tmpfs of a given size, an ext4 image on a
 * loop device that can be aborted (the kernel's "remount read-only on error", which — unlike a
 * read-only remount — also stops writes through descriptors already open), and read-only bind
 * mounts. Every mount is remembered so `unmountAll` can undo them after a failed test.
 */
import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, statfsSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const mounted: string[] = []

function run(command: string, args: readonly string[]): void {
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

/** Why this process cannot mount what the suite needs, or undefined when it can. */
export function mountProblem(): string | undefined {
  const probe = mkdtempSync(join(tmpdir(), 'rein-soak-mount-probe-'))
  try {
    try {
      run('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', probe])
      run('umount', [probe])
    } catch (error) {
      return `cannot mount a tmpfs here (needs root and a container that allows mounts): ${(error as Error).message.split('\n')[0]}`
    }
    const image = join(tmpdir(), `rein-soak-probe-${process.pid}.img`)
    try {
      makeExt4Image(image, 16 << 20)
      run('mount', ['-o', 'loop', image, probe])
      run('umount', [probe])
    } catch (error) {
      return `cannot mount an ext4 image on a loop device here (mkfs.ext4, losetup and /dev/loop* are needed): ${(error as Error).message.split('\n')[0]}`
    } finally {
      rmSync(image, { force: true })
    }
    return undefined
  } finally {
    rmdirSync(probe)
  }
}

function makeExt4Image(image: string, bytes: number): void {
  closeSync(openSync(image, 'w'))
  execFileSync('truncate', ['-s', String(bytes), image])
  // No lazy init threads writing behind the test's back.
  run('mkfs.ext4', ['-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0', image])
}

/** Mounts a tmpfs of `bytes` on `dir`. */
export function mountTmpfs(dir: string, bytes: number): void {
  run('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', dir])
  mounted.push(dir)
}

/** An ext4 file system in an image file, mounted on `dir` with errors=remount-ro. */
export interface Ext4Mount {
  readonly dir: string
  /** Aborts the file system: from now on every write on it, open descriptors included, fails with EROFS. */
  abort(): void
  /** Unmounts and mounts it again (the journal is replayed), writable. */
  remount(): void
  /** Unmounts it and removes the image. */
  remove(): void
}

/** Makes and mounts an ext4 image of `bytes` on `dir`. */
export function mountExt4(dir: string, bytes: number): Ext4Mount {
  const image = join(tmpdir(), `rein-soak-disk-${process.pid}-${Date.now().toString(36)}.img`)
  makeExt4Image(image, bytes)
  const mount = () => {
    run('mount', ['-o', 'loop,errors=remount-ro', image, dir])
    mounted.push(dir)
  }
  mount()
  return {
    dir,
    abort: () => run('mount', ['-o', 'remount,abort', dir]),
    remount: () => {
      unmount(dir)
      mount()
    },
    remove: () => {
      if (mounted.includes(dir)) unmount(dir)
      rmSync(image, { force: true })
    },
  }
}

/** Makes `dir` read-only through a bind mount of itself (what is open for writing keeps its access). */
export function bindReadOnly(dir: string): void {
  run('mount', ['--bind', dir, dir])
  mounted.push(dir)
  run('mount', ['-o', 'remount,bind,ro', dir])
}

/** Undoes the latest mount on `dir`. */
export function unmount(dir: string): void {
  run('umount', [dir])
  const at = mounted.lastIndexOf(dir)
  if (at >= 0) mounted.splice(at, 1)
}

/** Undoes every mount still in place, newest first (lazily if busy): a test's clean-up. */
export function unmountAll(): void {
  while (mounted.length > 0) {
    const dir = mounted.pop()!
    try {
      run('umount', [dir])
    } catch {
      try {
        run('umount', ['-l', dir])
      } catch {
        // Already gone.
      }
    }
  }
}

/** Bytes a process may still write on the file system holding `dir`. */
function freeBytes(dir: string): number {
  const stats = statfsSync(dir)
  return stats.bavail * stats.bsize
}

/** Writes `file` until about `leave` bytes are free on its file system (ENOSPC earlier is fine). */
export function fillLeaving(file: string, leave: number): void {
  const fd = openSync(file, 'w')
  const chunk = Buffer.alloc(64 * 1024, 0x66)
  try {
    let left = freeBytes(file) - leave
    while (left > 0) {
      const written = writeSync(fd, chunk, 0, Math.min(chunk.length, left))
      left -= written
    }
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
}
