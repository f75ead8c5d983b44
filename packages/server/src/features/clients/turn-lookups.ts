/**
 * Lookups by key that share one read per key among the callers of one turn of the event loop.
 *
 * Every request that arrived in one poll of the sockets asks within the same turn; the reads are made in the
 * turn's check phase (`setImmediate`), once those requests are all in, and each caller gets the result of a read
 * that began after it asked. So nothing is served from before the call: what was committed before a request
 * arrived (a client disabled by this process or by the admin CLI a moment ago) is what that request sees. Under
 * load many requests of the same client arrive per turn and pay for one read together; a lone request pays for
 * its own read plus the wait for the check phase, a few microseconds.
 */
export class TurnLookups<Key, Value> {
  private waiting = new Map<Key, Waiting<Value>>();
  private scheduled = false;
  private readonly flush = () => this.readAll();

  constructor(private readonly read: (key: Key) => Promise<Value>) {}

  get(key: Key): Promise<Value> {
    let entry = this.waiting.get(key);
    if (!entry) {
      entry = new Waiting<Value>();
      this.waiting.set(key, entry);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    }
    return entry.promise;
  }

  private readAll(): void {
    const batch = this.waiting;
    // Callers from now on (continuations of this batch, the next turn's requests) start the next batch.
    this.waiting = new Map();
    this.scheduled = false;
    for (const [key, entry] of batch) {
      let result: Promise<Value>;
      try {
        result = this.read(key);
      } catch (error) {
        result = Promise.reject(error);
      }
      result.then(entry.resolve, entry.reject);
    }
  }
}

class Waiting<Value> {
  readonly promise: Promise<Value>;
  resolve!: (value: Value) => void;
  reject!: (reason: unknown) => void;

  constructor() {
    this.promise = new Promise<Value>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
}
