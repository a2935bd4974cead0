/** What spaces and modules share: a name and a description, changed only where the command differs. */
export interface Labelled {
  readonly name: string;
  readonly description: string | null;
}

export interface LabelChange {
  readonly name?: string;
  readonly description?: string | null;
}

/** The part of `change` that differs from `current`; null when nothing would change. */
export function changedLabels(current: Labelled, change: LabelChange): LabelChange | null {
  const name = change.name !== undefined && change.name !== current.name ? change.name : undefined;
  const description =
    change.description !== undefined && change.description !== current.description
      ? change.description
      : undefined;
  if (name === undefined && description === undefined) return null;
  return { ...(name !== undefined && { name }), ...(description !== undefined && { description }) };
}

/** The state after a label change event. */
export function withLabels<State extends Labelled>(state: State, change: LabelChange): State {
  return {
    ...state,
    name: change.name ?? state.name,
    description: change.description !== undefined ? change.description : state.description,
  };
}
