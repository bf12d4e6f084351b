/**
 * @rein/compose: loads a `cordis.yml` composition read-only, resolving plugin names from the
 * file's folder, and reports every row that fails by id and field.
 */

export { loadComposition, type Composition, type CompositionOptions, type DisposeOptions, type FileVersion, type ReloadOptions } from './load.ts'
export { readConfigFile } from './read-config.ts'
export type { CompositionRow, ReloadReport } from './row-list.ts'
/** Every row of a cordis.yml, group members too, each with the group it sits in (`FlatRow`): how a reload compares rows. */
export { flattenRows, type FlatRow } from './row-list.ts'
export type { SlowLoad } from './stalled.ts'
