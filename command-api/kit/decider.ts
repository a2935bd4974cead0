import type { PersonalValues } from '../../contracts/personal-data';
/** A domain event as deciders produce it; the handler wraps it in the envelope. */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
  /** Which of its values are personal data, to be sealed under their subject's key (see `personal-data.ts`). */
  readonly personal?: PersonalValues;
}

/**
 * An aggregate's rules as three pure functions. `decide` answers a command with the events it causes, or
 * throws a `PlatformError` to refuse it; `evolve` folds one event into the state.
 */
export interface Decider<State, Command, Event extends DomainEvent> {
  readonly initialState: State;
  decide(command: Command, state: State): readonly Event[];
  evolve(state: State, event: Event): State;
}

export function fold<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, never, Event>, 'evolve'>,
  state: State,
  events: readonly Event[],
): State {
  return events.reduce((current, event) => decider.evolve(current, event), state);
}

/** The event, its values at `personal.paths` to be sealed for its subject (the store does it on append). */
export function withPersonalValues<Event extends DomainEvent>(event: Event, personal: PersonalValues): Event {
  return { ...event, personal };
}
