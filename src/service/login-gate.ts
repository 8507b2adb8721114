/**
 * The login gate (rule LOGIN-gate), in the core so every transport has it (spec 4.3 rule 3): unbounded, ~19
 * scrypt logins/s pushed every other login past 13 s. A fixed number of derivations run at once; the rest
 * wait in per-client FIFO queues (keyed by the peer address the transport gives), and a freed slot goes to
 * the waiting client with the fewest running, then the least recently served, so a newcomer never waits
 * behind a flooder's queue. Overflow is refused at once: past a client's own queue, or, with the total queue
 * full, the newest waiter of the longest queue. Not per username: that would let anyone lock a victim out.
 */
import { availableParallelism } from 'node:os';
import { namedError } from '../domain/named-error.ts';

/** The gate is full for this caller: answered at once (429 / RESOURCE_EXHAUSTED), never queued. */
export class ErrLoginBusy extends namedError('ErrLoginBusy', 'too many login attempts') {}

export interface LoginGateLimits {
  /** Password derivations running at once. */
  readonly concurrency: number;
  /** Logins one client may have waiting; the next is refused. */
  readonly queuePerClient: number;
  /** Logins waiting in all; past it the longest client queue gives up its newest entry. */
  readonly queueTotal: number;
}

/**
 * Measured (bench/login-flood.ts): more derivations at once than cores only stretches each, so one per core
 * but one, which the event loop keeps for every other request, capped at libuv's thread pool (4) where
 * scrypt runs. A client may wait behind 2 of its own; the whole queue holds 8 per running derivation.
 */
export function defaultLoginGateLimits(cores: number = availableParallelism()): LoginGateLimits {
  const concurrency = Math.max(1, Math.min(4, cores - 1));
  return { concurrency, queuePerClient: 2, queueTotal: 8 * concurrency };
}

/** Who is waiting, with the callbacks that let it run or refuse it. */
interface Waiter {
  readonly admit: () => void;
  readonly refuse: (error: ErrLoginBusy) => void;
}

/** Whose logins share one queue when the transport cannot tell callers apart. */
export const UNIDENTIFIED_CLIENT = 'unidentified';

export class LoginGate {
  readonly #limits: LoginGateLimits;
  #running = 0;
  #waiting = 0;
  /**
   * Per client running or waiting: its derivations running (the next slot goes to the waiting client with the
   * fewest) and when it last got a slot (a counter: ties go to the least recently served).
   */
  readonly #clients = new Map<string, { running: number; servedAt: number }>();
  #served = 0;
  /** Insertion order is the round-robin order: a client served moves to the back. */
  readonly #queues = new Map<string, Waiter[]>();

  constructor(limits: LoginGateLimits = defaultLoginGateLimits()) {
    if (limits.concurrency < 1 || limits.queuePerClient < 0 || limits.queueTotal < 0)
      throw new RangeError('login gate: limits must be positive');
    this.#limits = limits;
  }

  /**
   * Runs `work` when a slot is free for `client`, or throws ErrLoginBusy without running it. A wait
   * whose `signal` aborts (its caller went away) leaves the queue at once and rejects with the
   * signal's reason: nobody is left to answer, so its place and its derivation go to others.
   */
  async run<T>(client: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    await this.#admit(client, signal);
    try {
      return await work();
    } finally {
      const state = this.#clients.get(client)!;
      state.running -= 1;
      this.#next();
      if (state.running === 0 && !this.#queues.has(client)) this.#clients.delete(client);
    }
  }

  /** What the gate holds right now (tests and the bench). */
  get load(): { readonly running: number; readonly waiting: number } {
    return { running: this.#running, waiting: this.#waiting };
  }

  #admit(client: string, signal: AbortSignal | undefined): Promise<void> {
    if (this.#running < this.#limits.concurrency && this.#waiting === 0) {
      this.#running += 1;
      this.#startedFor(client);
      return Promise.resolve();
    }
    const own = this.#queues.get(client) ?? [];
    if (own.length >= this.#limits.queuePerClient) return Promise.reject(new ErrLoginBusy());
    if (this.#waiting >= this.#limits.queueTotal && !this.#dropFromLongerThan(own.length)) return Promise.reject(new ErrLoginBusy());
    return new Promise<void>((admit, refuse) => {
      // Listens only while its waiter is queued: admit and refuse remove it as the waiter leaves its queue.
      const leave = (): void => {
        const queue = this.#queues.get(client)!;
        queue.splice(queue.indexOf(waiter), 1);
        this.#waiting -= 1;
        if (queue.length === 0) this.#queues.delete(client);
        refuse(signal?.reason);
      };
      const waiter: Waiter = {
        admit: () => (signal?.removeEventListener('abort', leave), admit()),
        refuse: (error) => (signal?.removeEventListener('abort', leave), refuse(error)),
      };
      own.push(waiter);
      this.#queues.set(client, own); // a key the Map holds keeps its place in the round-robin order
      this.#waiting += 1;
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  #startedFor(client: string): void {
    const state = this.#clients.get(client) ?? { running: 0, servedAt: 0 };
    state.running += 1;
    state.servedAt = ++this.#served;
    this.#clients.set(client, state);
  }

  /** Whether `a` goes before `b`: fewer derivations running, then served less recently (round robin). */
  #before(a: string, b: string): boolean {
    const none = { running: 0, servedAt: 0 };
    const [x, y] = [this.#clients.get(a) ?? none, this.#clients.get(b) ?? none];
    return x.running === y.running ? x.servedAt < y.servedAt : x.running < y.running;
  }

  /** Longest-queue drop: refuses the newest waiter of the longest queue, if it is longer than `length`. */
  #dropFromLongerThan(length: number): boolean {
    let longest: [string, Waiter[]] | undefined;
    for (const entry of this.#queues) if (entry[1].length > (longest?.[1].length ?? length)) longest = entry;
    if (longest === undefined) return false;
    const [client, queue] = longest;
    queue.pop()!.refuse(new ErrLoginBusy());
    this.#waiting -= 1;
    if (queue.length === 0) this.#queues.delete(client);
    return true;
  }

  /** A derivation finished: its slot goes to the next waiting client (#before), or is freed. At most queueTotal wait. */
  #next(): void {
    let turn: [string, Waiter[]] | undefined;
    for (const entry of this.#queues) if (turn === undefined || this.#before(entry[0], turn[0])) turn = entry;
    if (turn === undefined) {
      this.#running -= 1;
      return;
    }
    const [client, queue] = turn;
    const waiter = queue.shift()!;
    this.#waiting -= 1;
    this.#queues.delete(client);
    if (queue.length > 0) this.#queues.set(client, queue);
    this.#startedFor(client);
    waiter.admit();
  }
}
