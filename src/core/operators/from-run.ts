import { Observable } from 'rxjs';

/**
 * An episode written as an async function that emits as it goes, as a stream: each emitted
 * value is a `next`, the function's end completes the stream and its error errors it.
 * The arenas whose protocol awaits their roles' turns in order play through this.
 *
 * @example
 * fromRun<number>(async (emit) => { emit(1); await step(); emit(2); }).subscribe(console.log); // 1, 2
 */
export function fromRun<T>(run: (emit: (x: T) => void) => Promise<void>): Observable<T> {
  return new Observable<T>((sub) => {
    run((x) => sub.next(x)).then(
      () => sub.complete(),
      (e) => sub.error(e),
    );
  });
}
