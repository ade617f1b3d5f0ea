/**
 * The lifecycle of a task (one service × one input partition), as Kafka Streams' Task.State:
 *
 *        ┌──────────┐   open    ┌───────────┐  restored  ┌─────────┐
 *        │ created  │ ────────► │ restoring │ ─────────► │ running │
 *        └──────────┘           └───────────┘            └─────────┘
 *             │                   │      │                 │     ▲
 *             │        open failed│      │revoked/migrated │     │ resume
 *             │                   ▼      ▼                 ▼     │
 *             │              ┌────────┐  ┌───────────┐◄────┘     │
 *             └────────────► │ closed │◄─│ suspended │───────────┘
 *                            └────────┘  └───────────┘
 *
 * - created: constructed, nothing opened yet.
 * - restoring: the producer is fenced (Kafka) and stores are brought to the end of their changelog.
 *   No record is processed.
 * - running: batches and punctuations run.
 * - suspended: processing stopped (revocation in progress, or the task was found migrated); the
 *   task either closes (clean: final commit; dirty: drop uncommitted state) or resumes.
 * - closed: resources released; terminal.
 * Any other move is a bug and throws IllegalTaskStateError.
 */
import { IllegalTaskStateError } from './errors.ts';

export type TaskState = 'created' | 'restoring' | 'running' | 'suspended' | 'closed';

const ALLOWED: Readonly<Record<TaskState, readonly TaskState[]>> = {
  created: ['restoring', 'closed'],
  restoring: ['running', 'suspended', 'closed'],
  running: ['suspended'],
  suspended: ['running', 'closed'],
  closed: [],
};

export function canTransition(from: TaskState, to: TaskState): boolean {
  return ALLOWED[from].includes(to);
}

/** One state field with checked transitions; the task's only notion of "open", "closing", … */
export class TaskLifecycle {
  private current: TaskState = 'created';
  private readonly listeners: ((from: TaskState, to: TaskState) => void)[] = [];

  constructor(readonly taskId: string) {}

  get state(): TaskState {
    return this.current;
  }

  is(...states: TaskState[]): boolean {
    return states.includes(this.current);
  }

  transitionTo(to: TaskState): void {
    const from = this.current;
    if (!canTransition(from, to)) throw new IllegalTaskStateError(`task ${this.taskId}: illegal transition ${from} → ${to}`);
    this.current = to;
    for (const l of this.listeners) l(from, to);
  }

  onTransition(listener: (from: TaskState, to: TaskState) => void): void {
    this.listeners.push(listener);
  }
}
