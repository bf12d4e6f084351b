/** HEAD's short hash in `repo`, `+changes` when the checkout differs from it (`ownOutput` aside); `unknown` outside git. */
export declare function measuredCommit(repo: string, ownOutput: string): string
