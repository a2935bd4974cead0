import type {
  AfterCommitHook,
  AppendResult,
  CommittedAppend,
  StreamAppend,
  StreamAppendOutcome,
} from './port';

/**
 * The after-commit hooks of one event store, for its adapter to run around its own appends: one
 * implementation, so no adapter can run them differently.
 */
export class AfterCommitHooks {
  private readonly hooks: AfterCommitHook[] = [];

  /** Adds a hook (run after the ones added before it); the function returned removes it. */
  add(hook: AfterCommitHook): () => void {
    this.hooks.push(hook);
    return () => {
      const index = this.hooks.indexOf(hook);
      if (index >= 0) this.hooks.splice(index, 1);
    };
  }

  /** `appending` (one append to `streamId`), answered once the hooks have run. */
  async append(streamId: string, appending: Promise<AppendResult>): Promise<AppendResult> {
    const result = await appending;
    await this.run([{ streamId, ...result }]);
    return result;
  }

  /** `appending` (the outcomes of `appends`, in their order), answered once the hooks have run. */
  async appendToStreams(
    appends: readonly StreamAppend[],
    appending: Promise<StreamAppendOutcome[]>,
  ): Promise<StreamAppendOutcome[]> {
    const outcomes = await appending;
    await this.run(
      outcomes.flatMap((outcome, index) =>
        outcome.ok ? [{ streamId: appends[index]!.streamId, ...outcome.result }] : [],
      ),
    );
    return outcomes;
  }

  private async run(commits: readonly CommittedAppend[]): Promise<void> {
    if (commits.length === 0) return;
    // A copy: a hook that removes itself (or another) does not shift the ones still to run.
    for (const hook of [...this.hooks]) await hook(commits);
  }
}
