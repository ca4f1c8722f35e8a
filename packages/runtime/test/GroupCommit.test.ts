/**
 * Group commit (`internal/groupCommit.ts`) without a database: a lone request goes at once through
 * `one`; requests made while `inFlight` statements are out wait and go together through `many` when
 * one answers, each caller getting its own answer; `maxBatch` splits; a caller interrupted while it
 * waits is never sent; a statement's defect is every caller's. Then a property: for any arrival of
 * requests over any limits, every request is sent exactly once, answered with its own answer, and
 * never more than `inFlight` statements are out at once.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, References, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as GroupCommit from "../src/internal/groupCommit.js"

/** A fake database: every statement waits for the test to answer it; what was sent, in order. */
const makeFake = (options: { readonly inFlight: number; readonly maxBatch: number }) =>
  Effect.sync(() => {
    const statements: Array<ReadonlyArray<number>> = []
    const gates: Array<Deferred.Deferred<void>> = []
    let out = 0
    let maxOut = 0
    const statement = (requests: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        statements.push(requests)
        out++
        maxOut = Math.max(maxOut, out)
        const gate = yield* Deferred.make<void>()
        gates.push(gate)
        // a statement whose caller is interrupted (it ran in the caller's fiber) is no longer out
        yield* Effect.ensuring(
          Deferred.await(gate),
          Effect.sync(() => {
            out--
            const waiting = gates.indexOf(gate)
            if (waiting >= 0) gates.splice(waiting, 1)
          })
        )
      })
    const sender = GroupCommit.make<number, string, string>({
      ...options,
      one: (n) =>
        Effect.flatMap(statement([n]), () => n < 0 ? Effect.fail(`refused ${n}`) : Effect.succeed(`one ${n}`)),
      many: (ns) =>
        Effect.map(
          statement(ns),
          () => ns.map((n) => n < 0 ? Exit.fail(`refused ${n}`) : Exit.succeed(`many ${n}`))
        )
    })
    /** Answers the oldest unanswered statement. */
    const answerNext = Effect.suspend(() => {
      const gate = gates.shift()
      return gate === undefined ? Effect.die("no statement is out") : Deferred.succeed(gate, undefined)
    })
    return { sender, statements, answerNext, maxOut: () => maxOut, out: () => out, ready: () => gates.length }
  })

/**
 * A sender with one statement out (request 1, alone, held until `open`) and requests 2 and 3 waiting
 * behind it; `many` is the statement they go in once it answers.
 */
const behindOne = (many: GroupCommit.Options<number, string, never>["many"]) =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const sender = GroupCommit.make<number, string, never>({
      inFlight: 1,
      maxBatch: 64,
      one: (n) => Effect.as(Deferred.await(gate), `one ${n}`),
      many
    })
    const first = yield* Effect.forkChild(sender.send(1), { startImmediately: true })
    const a = yield* Effect.forkChild(sender.send(2), { startImmediately: true })
    const b = yield* Effect.forkChild(sender.send(3), { startImmediately: true })
    return { sender, first, a, b, open: Deferred.succeed(gate, undefined) }
  })

/** Lets forked fibers run a few scheduler turns. */
const settle = Effect.gen(function*() {
  for (let i = 0; i < 5; i++) yield* Effect.yieldNow
})

describe("GroupCommit", () => {
  it.effect("a lone request goes at once, alone", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({ inFlight: 2, maxBatch: 64 })
      const fiber = yield* Effect.forkChild(fake.sender.send(1), { startImmediately: true })
      assert.deepStrictEqual(fake.statements, [[1]])
      yield* fake.answerNext
      assert.strictEqual(yield* Fiber.join(fiber), "one 1")
    }))

  it.effect("requests made while the statements are out go together when one answers, each with its answer", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({ inFlight: 1, maxBatch: 64 })
      const fibers = []
      for (const n of [1, 2, -3, 4]) {
        fibers.push(yield* Effect.forkChild(fake.sender.send(n), { startImmediately: true }))
      }
      assert.deepStrictEqual(fake.statements, [[1]])
      yield* fake.answerNext
      yield* Effect.yieldNow
      assert.deepStrictEqual(fake.statements, [[1], [2, -3, 4]])
      yield* fake.answerNext
      const exits = yield* Effect.forEach(fibers, Fiber.await)
      assert.deepStrictEqual(exits, [
        Exit.succeed("one 1"),
        Exit.succeed("many 2"),
        Exit.fail("refused -3"),
        Exit.succeed("many 4")
      ])
    }))

  it.effect("maxBatch splits what waits, and inFlight statements go at once", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({ inFlight: 2, maxBatch: 2 })
      const fibers = []
      for (let n = 1; n <= 7; n++) fibers.push(yield* Effect.forkChild(fake.sender.send(n), { startImmediately: true }))
      assert.deepStrictEqual(fake.statements, [[1], [2]])
      yield* fake.answerNext
      yield* fake.answerNext
      yield* Effect.yieldNow
      assert.deepStrictEqual(fake.statements, [[1], [2], [3, 4], [5, 6]])
      yield* fake.answerNext
      yield* Effect.yieldNow
      assert.deepStrictEqual(fake.statements, [[1], [2], [3, 4], [5, 6], [7]])
      yield* fake.answerNext
      yield* fake.answerNext
      assert.deepStrictEqual(yield* Effect.forEach(fibers, Fiber.join), [
        "one 1",
        "one 2",
        "many 3",
        "many 4",
        "many 5",
        "many 6",
        "one 7"
      ])
      assert.strictEqual(fake.maxOut(), 2)
    }))

  it.effect("a caller interrupted while it waits is never sent", () =>
    Effect.gen(function*() {
      const fake = yield* makeFake({ inFlight: 1, maxBatch: 64 })
      const first = yield* Effect.forkChild(fake.sender.send(1), { startImmediately: true })
      const gone = yield* Effect.forkChild(fake.sender.send(2), { startImmediately: true })
      const kept = yield* Effect.forkChild(fake.sender.send(3), { startImmediately: true })
      yield* Fiber.interrupt(gone)
      yield* fake.answerNext
      yield* Effect.yieldNow
      assert.deepStrictEqual(fake.statements, [[1], [3]])
      yield* fake.answerNext
      assert.strictEqual(yield* Fiber.join(first), "one 1")
      assert.strictEqual(yield* Fiber.join(kept), "one 3")
    }))

  it.effect("a statement's defect is every caller's, and the next statement still goes", () =>
    Effect.gen(function*() {
      const { a, b, first, open, sender } = yield* behindOne(() => Effect.die("driver bug"))
      yield* open
      assert.strictEqual(yield* Fiber.join(first), "one 1")
      for (const exit of [yield* Fiber.await(a), yield* Fiber.await(b)]) {
        assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      }
      assert.strictEqual(yield* sender.send(4), "one 4")
    }))

  it.effect("a defect thrown by `one` as it is called is its caller's, and the next request still goes", () =>
    Effect.gen(function*() {
      const sender = GroupCommit.make<number, string, never>({
        inFlight: 1,
        maxBatch: 64,
        one: (n) => {
          if (n === 0) throw new Error("thrown while building the statement")
          return Effect.succeed(`one ${n}`)
        },
        many: (ns) => Effect.succeed(ns.map((n) => Exit.succeed(`many ${n}`)))
      })
      const thrown = yield* Effect.exit(sender.send(0))
      assert.isTrue(Exit.isFailure(thrown) && Cause.hasDies(thrown.cause))
      const next = yield* Effect.forkChild(sender.send(1), { startImmediately: true })
      yield* settle
      assert.deepStrictEqual(next.pollUnsafe(), Exit.succeed("one 1"))
    }))

  it.effect("a defect thrown by `many` as it is called is every waiting caller's, and the next request still goes", () =>
    Effect.gen(function*() {
      const { a, b, first, open, sender } = yield* behindOne(() => {
        throw new Error("thrown while building the statement")
      })
      yield* open
      yield* settle
      assert.deepStrictEqual(first.pollUnsafe(), Exit.succeed("one 1"))
      for (const fiber of [a, b]) {
        const exit = fiber.pollUnsafe()
        assert.isTrue(exit !== undefined && Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      }
      const next = yield* Effect.forkChild(sender.send(4), { startImmediately: true })
      yield* settle
      assert.deepStrictEqual(next.pollUnsafe(), Exit.succeed("one 4"))
    }))

  it.effect("`many` answering fewer requests than it was given: each caller gets a defect, not a hang or another's answer", () =>
    Effect.gen(function*() {
      const { a, b, open } = yield* behindOne((ns) => Effect.succeed(ns.slice(1).map((n) => Exit.succeed(`many ${n}`))))
      yield* open
      yield* settle
      const exits = [a.pollUnsafe(), b.pollUnsafe()]
      assert.isTrue(exits.every((exit) => exit !== undefined && Exit.isFailure(exit) && Cause.hasDies(exit.cause)))
    }))

  it.effect("a caller interrupted as it yields on its way to sending alone leaks no slot", () =>
    Effect.gen(function*() {
      const sender = GroupCommit.make<number, string, never>({
        inFlight: 1,
        maxBatch: 64,
        one: (n) => Effect.succeed(`one ${n}`),
        many: (ns) => Effect.succeed(ns.map((n) => Exit.succeed(`many ${n}`)))
      })
      // the scheduler makes the fiber yield after every operation, so it is interrupted between any two
      for (let budget = 2; budget <= 8; budget++) {
        for (let ops = 0; ops < 12; ops++) {
          let call = sender.send(0)
          for (let i = 0; i < ops; i++) call = Effect.andThen(Effect.void, call)
          const caller = yield* Effect.forkChild(Effect.provideService(call, References.MaxOpsBeforeYield, budget), {
            startImmediately: true
          })
          yield* Fiber.interrupt(caller)
        }
      }
      const next = yield* Effect.forkChild(sender.send(1), { startImmediately: true })
      yield* settle
      assert.deepStrictEqual(next.pollUnsafe(), Exit.succeed("one 1"))
    }))

  it.effect("a request not sent within maxWaitMs goes alone; one sent before is never sent twice", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const sent: Array<ReadonlyArray<number>> = []
      const sender = GroupCommit.make<number, string, never>({
        inFlight: 1,
        maxBatch: 64,
        maxWaitMs: 100,
        one: (n) => Effect.as(n === 1 ? Deferred.await(gate) : Effect.sync(() => sent.push([n])), `one ${n}`),
        many: (ns) => Effect.sync(() => (sent.push(ns), ns.map((n) => Exit.succeed(`many ${n}`))))
      })
      const stuck = yield* Effect.forkChild(sender.send(1), { startImmediately: true })
      const waiting = yield* Effect.forkChild(sender.send(2), { startImmediately: true })
      yield* TestClock.adjust("99 millis")
      assert.deepStrictEqual(sent, [])
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* Fiber.join(waiting), "one 2")
      // the stuck statement answers: nothing is left to send, and 2 is not sent again
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(stuck), "one 1")
      const a = yield* Effect.forkChild(sender.send(3), { startImmediately: true })
      assert.strictEqual(yield* Fiber.join(a), "one 3")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(sent, [[2], [3]])
    }))

  it.effect("requests sent together before maxWaitMs are answered once, by their statement", () =>
    Effect.gen(function*() {
      const fake = yield* Effect.sync(() => {
        const statements: Array<ReadonlyArray<number>> = []
        const gates: Array<Deferred.Deferred<void>> = []
        const statement = (ns: ReadonlyArray<number>) =>
          Effect.gen(function*() {
            statements.push(ns)
            const gate = yield* Deferred.make<void>()
            gates.push(gate)
            yield* Deferred.await(gate)
          })
        const sender = GroupCommit.make<number, string, never>({
          inFlight: 1,
          maxBatch: 64,
          maxWaitMs: 100,
          one: (n) => Effect.as(statement([n]), `one ${n}`),
          many: (ns) => Effect.as(statement(ns), ns.map((n) => Exit.succeed(`many ${n}`)))
        })
        return { sender, statements, gates }
      })
      const first = yield* Effect.forkChild(fake.sender.send(1), { startImmediately: true })
      const rest = [
        yield* Effect.forkChild(fake.sender.send(2), { startImmediately: true }),
        yield* Effect.forkChild(fake.sender.send(3), { startImmediately: true })
      ]
      yield* TestClock.adjust("50 millis")
      yield* Deferred.succeed(fake.gates[0], undefined)
      yield* Effect.yieldNow
      assert.deepStrictEqual(fake.statements, [[1], [2, 3]])
      // their statement is slow: past maxWaitMs they stay with it
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(fake.statements, [[1], [2, 3]])
      yield* Deferred.succeed(fake.gates[1], undefined)
      assert.strictEqual(yield* Fiber.join(first), "one 1")
      assert.deepStrictEqual(yield* Effect.forEach(rest, Fiber.join), ["many 2", "many 3"])
    }))

  it.effect.prop(
    "any arrival of requests: each sent once, answered with its own answer, never more than inFlight out",
    {
      inFlight: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 4 })),
      maxBatch: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })),
      // each arrival: how many requests come at once, then how many statements answer
      waves: Schema.Array(
        Schema.Tuple([
          Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 6 })),
          Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 }))
        ])
      ).check(Schema.isMinLength(1), Schema.isMaxLength(8))
    },
    ({ inFlight, maxBatch, waves }) =>
      Effect.gen(function*() {
        const fake = yield* makeFake({ inFlight, maxBatch })
        const fibers: Array<Fiber.Fiber<string, string>> = []
        let n = 0
        for (const [arrive, answer] of waves) {
          for (let i = 0; i < arrive; i++) {
            const request = n % 5 === 4 ? -n : n
            n++
            fibers.push(yield* Effect.forkChild(fake.sender.send(request), { startImmediately: true }))
          }
          for (let i = 0; i < answer && fake.out() > 0; i++) {
            yield* fake.answerNext
            yield* Effect.yieldNow
          }
        }
        while (fibers.some((f) => f.pollUnsafe() === undefined)) {
          yield* fake.answerNext
          yield* Effect.yieldNow
        }
        const sent = fake.statements.flat()
        assert.deepStrictEqual(
          sent.toSorted((x, y) => Math.abs(x) - Math.abs(y)),
          Array.from({ length: n }, (_, i) => i % 5 === 4 ? -i : i)
        )
        assert.isTrue(fake.statements.every((s) => s.length <= maxBatch))
        assert.isAtMost(fake.maxOut(), inFlight)
        const exits = yield* Effect.forEach(fibers, Fiber.await)
        exits.forEach((exit, i) => {
          const request = i % 5 === 4 ? -i : i
          const alone = fake.statements.some((s) => s.length === 1 && s[0] === request)
          assert.deepStrictEqual(
            exit,
            request < 0 ? Exit.fail(`refused ${request}`) : Exit.succeed(`${alone ? "one" : "many"} ${request}`)
          )
        })
      }),
    { arbitrary: { runs: 200 } }
  )
  it.effect.prop(
    "any interruptions (before, while waiting, while out, at any yield): no slot leaks, the others get their own answers",
    {
      inFlight: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })),
      budget: Schema.Int.check(Schema.isBetween({ minimum: 3, maximum: 8 })),
      // each request: operations before it sends, whether it is interrupted, statements answered after it
      calls: Schema.Array(
        Schema.Tuple([
          Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4 })),
          Schema.Boolean,
          Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2 }))
        ])
      ).check(Schema.isMinLength(1), Schema.isMaxLength(10))
    },
    ({ budget, calls, inFlight }) =>
      Effect.gen(function*() {
        const fake = yield* makeFake({ inFlight, maxBatch: 3 })
        const fibers: Array<Fiber.Fiber<string, string>> = []
        for (const [n, [ops, interrupt, answers]] of calls.entries()) {
          let call = fake.sender.send(n)
          for (let i = 0; i < ops; i++) call = Effect.andThen(Effect.void, call)
          const fiber = yield* Effect.forkChild(Effect.provideService(call, References.MaxOpsBeforeYield, budget), {
            startImmediately: true
          })
          fibers.push(fiber)
          if (interrupt) yield* Effect.forkChild(Fiber.interrupt(fiber), { startImmediately: true })
          for (let i = 0; i < answers && fake.ready() > 0; i++) {
            yield* fake.answerNext
            yield* Effect.yieldNow
          }
        }
        // callers still on their way (yielded by the scheduler) get turns; statements out are answered
        for (let turn = 0; fibers.some((f) => f.pollUnsafe() === undefined); turn++) {
          if (turn > 1000) {
            return assert.fail(
              `a caller waits and nothing moves: ${JSON.stringify({ inFlight, budget, calls })}, ${
                fibers.map((f) => f.pollUnsafe() === undefined).join()
              } out ${fake.out()} ${JSON.stringify(fake.statements)}`
            )
          }
          if (fake.ready() > 0) yield* fake.answerNext
          yield* Effect.yieldNow
        }
        for (const [n, fiber] of fibers.entries()) {
          const exit = yield* Fiber.await(fiber)
          if (Exit.isSuccess(exit)) assert.oneOf(exit.value, [`one ${n}`, `many ${n}`])
          else assert.isTrue(calls[n][1] && Cause.hasInterruptsOnly(exit.cause), `${n}: ${String(exit)}`)
        }
        // every slot was given back: inFlight new requests all go at once
        const next = []
        for (let i = 0; i < inFlight; i++) {
          next.push(yield* Effect.forkChild(fake.sender.send(100 + i), { startImmediately: true }))
        }
        assert.strictEqual(fake.out(), inFlight)
        while (fake.ready() > 0) yield* fake.answerNext
        assert.deepStrictEqual(
          yield* Effect.forEach(next, Fiber.join),
          next.map((_, i) => `one ${100 + i}`)
        )
      }),
    { arbitrary: { runs: 200 } }
  )
})
