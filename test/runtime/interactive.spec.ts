import { expect } from 'chai';
import { BROWSING_MS, InteractiveGate, PAUSED_SLICE_MS, RECENT_MS, STEP_TURN_MS, TURN_MS, turnsEvery } from '../../runtime/interactive.ts';

describe('interactive requests first (InteractiveGate)', () => {
  it('lets bulk work go on at once while no request is in flight', () => {
    const gate = new InteractiveGate(50);
    expect(gate.pause()).to.equal(undefined);
    const leave = gate.enter();
    leave();
    expect(gate.inFlight).to.equal(0);
    expect(gate.pause()).to.equal(undefined);
  });

  it('holds bulk work back until the last request in flight is answered', async () => {
    const gate = new InteractiveGate(5_000);
    const first = gate.enter();
    const second = gate.enter();
    let resumed = false;
    const paused = gate.pause()!.then(() => { resumed = true; });
    first();
    await new Promise((r) => setTimeout(r, 20));
    expect(resumed).to.equal(false);
    second();
    await paused;
    expect(resumed).to.equal(true);
  });

  it('holds it back no longer than the longest pause, so that a steady stream of requests does not stop it', async () => {
    const gate = new InteractiveGate(30);
    const leave = gate.enter();
    const started = performance.now();
    await gate.pause();
    expect(performance.now() - started).to.be.within(20, 1_000);
    leave();
  });

  it('counts a request once, however often it leaves (answered, and made bulk before that)', () => {
    const gate = new InteractiveGate();
    const leave = gate.enter();
    gate.enter();
    leave();
    leave();
    expect(gate.inFlight).to.equal(1);
  });
});

describe('bulk work capped while interactive requests are served (InteractiveGate.throttle)', () => {
  /** A gate on a clock the test moves. */
  const gateAt = () => {
    const clock = { now: 1_000 };
    return { gate: new InteractiveGate(10, () => clock.now), clock };
  };
  const waitOf = async (waiting: Promise<void> | undefined) => {
    if (!waiting) return 0;
    const started = performance.now();
    await waiting;
    return performance.now() - started;
  };

  it('does not cap bulk work when no request was in flight lately, or when there is no rate', () => {
    const { gate, clock } = gateAt();
    expect(gate.throttle(10_000_000, 1_000)).to.equal(undefined);
    gate.enter()();
    clock.now += RECENT_MS + 1;
    expect(gate.throttle(10_000_000, 1_000)).to.equal(undefined);
    gate.enter();
    expect(gate.throttle(10_000_000, 0)).to.equal(undefined);
  });

  it('makes bulk work wait for what it handed on, at the rate, while a request is in flight or was answered lately', async () => {
    const { gate, clock } = gateAt();
    const leave = gate.enter();
    // 50 kB at 1 MB/s: 50 ms.
    expect(await waitOf(gate.throttle(50_000, 1_000_000))).to.be.within(40, 1_000);
    leave();
    clock.now += RECENT_MS / 2;
    // Answered within RECENT_MS: still capped (the clock stood still: the debt is 100 ms).
    expect(gate.throttle(50_000, 1_000_000)).to.not.equal(undefined);
    clock.now += RECENT_MS * 2;
    expect(gate.throttle(50_000, 1_000_000)).to.equal(undefined);
  });

  it('does not cap an export for its own request, which became bulk work', () => {
    const { gate } = gateAt();
    const leave = gate.enter();
    leave(true);
    expect(gate.inFlight).to.equal(0);
    expect(gate.throttle(10_000_000, 1_000)).to.equal(undefined);
  });

  it('shares the rate among all bulk work of the instance, and adds up parts too small to wait for', () => {
    const { gate } = gateAt();
    gate.enter();
    // 1 kB at 1 MB/s is 1 ms: no timer for that alone.
    expect(gate.throttle(1_000, 1_000_000)).to.equal(undefined);
    // A second export's part comes after the first one's: the debt is theirs together.
    const second = gate.throttle(1_500, 1_000_000);
    expect(second).to.not.equal(undefined);
  });

  it('forgets the debt of a busy period once bulk work ran free', () => {
    const { gate, clock } = gateAt();
    const leave = gate.enter();
    gate.throttle(1_000_000, 1_000_000);
    leave();
    clock.now += 5_000;
    gate.enter();
    // Only this part's 1 ms, not the second left over from before.
    expect(gate.throttle(1_000, 1_000_000)).to.equal(undefined);
  });
});

describe('one call per part of bulk work (InteractiveGate.giveWay)', () => {
  it('pauses while a request is in flight, then pays for the part at the rate', async () => {
    const gate = new InteractiveGate(30);
    await gate.giveWay(1_000_000, 1_000);
    expect(gate.giveWay(1_000_000, 1_000), 'nothing in flight').to.equal(undefined);
    const leave = gate.enter();
    const started = performance.now();
    // 30 ms pause (the request stays in flight), then 50 kB at 1 MB/s: 50 ms.
    await gate.giveWay(50_000, 1_000_000);
    expect(performance.now() - started).to.be.within(70, 1_000);
    leave();
  });
});

describe('people browsing (InteractiveGate.browsing)', () => {
  const clock = { now: 1_000_000 };
  const gate = () => new InteractiveGate(10, () => clock.now);

  it('is true while a person\'s request is in flight and for BROWSING_MS after its answer, then false', () => {
    const g = gate();
    expect(g.browsing()).to.equal(false);
    const leave = g.enter();
    clock.now += BROWSING_MS * 2;
    expect(g.browsing(), 'in flight').to.equal(true);
    leave();
    clock.now += BROWSING_MS;
    expect(g.browsing(), 'just answered').to.equal(true);
    clock.now += 1;
    expect(g.browsing()).to.equal(false);
  });

  it('does not count health probes or requests that became bulk work, which still go first', () => {
    const g = gate();
    const probe = g.enter(true);
    expect(g.inFlight).to.equal(1);
    expect(g.browsing()).to.equal(false);
    probe();
    expect(g.browsing()).to.equal(false);
    const exporting = g.enter();
    exporting(true);
    expect(g.browsing()).to.equal(false);
  });
});

describe('bulk work lets the event loop take its turn (InteractiveGate.giveWay)', () => {
  it('gives a turn (setImmediate) once TURN_MS have passed since it last waited, and not before', async () => {
    const clock = { now: 1_000 };
    const gate = new InteractiveGate(10, () => clock.now);
    const first = gate.giveWay(1_000, 0);
    expect(first).to.be.instanceOf(Promise);
    await first;
    expect(gate.giveWay(1_000, 0)).to.equal(undefined);
    clock.now += TURN_MS - 0.5;
    expect(gate.giveWay(1_000, 0)).to.equal(undefined);
    clock.now += 0.5;
    let turned = false;
    const turn = gate.giveWay(1_000, 0)!.then(() => { turned = true; });
    // A turn, not a wait: it ends in the same round of the event loop as an I/O callback would run.
    await new Promise((resolve) => setImmediate(resolve));
    await turn;
    expect(turned).to.equal(true);
    expect(gate.giveWay(1_000, 0)).to.equal(undefined);
  });

  it('lets an I/O callback run between parts of bulk work that never waits for data', async () => {
    const gate = new InteractiveGate(10);
    let served = false;
    setImmediate(() => { served = true; });
    const started = performance.now();
    // Parts handed on back to back as microtasks (as when they are already read): without turns this loop would hold the event loop.
    while (!served && performance.now() - started < 1_000) await gate.giveWay(1_000, 0);
    expect(served).to.equal(true);
    expect(performance.now() - started).to.be.below(100);
  });
});

describe('bulk work of many small steps waits for requests in flight (InteractiveGate.turn)', () => {
  it('with no request in flight, gives a turn once STEP_TURN_MS have passed since it last waited, and not before', async () => {
    const clock = { now: 1_000 };
    const gate = new InteractiveGate(10, () => clock.now);
    await gate.turn();
    expect(gate.turn()).to.equal(undefined);
    clock.now += STEP_TURN_MS / 2;
    expect(gate.turn()).to.equal(undefined);
    clock.now += STEP_TURN_MS / 2;
    const turn = gate.turn();
    expect(turn).to.be.instanceOf(Promise);
    await turn;
    expect(gate.figures.pauses).to.equal(0);
  });

  it('with a request in flight, pauses after PAUSED_SLICE_MS until it is answered, then runs a slice again before the next pause', async () => {
    const clock = { now: 1_000 };
    const gate = new InteractiveGate(10_000, () => clock.now);
    await gate.turn();
    const leave = gate.enter();
    clock.now += PAUSED_SLICE_MS / 2;
    expect(gate.turn()).to.equal(undefined);
    clock.now += PAUSED_SLICE_MS / 2;
    let resumed = false;
    const paused = gate.turn()!.then(() => { resumed = true; });
    // Not a turn of the event loop: it waits for the request however many rounds pass.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(resumed).to.equal(false);
    clock.now += 3;
    leave();
    await paused;
    expect(resumed).to.equal(true);
    expect(gate.figures).to.include({ pauses: 1, pausedMs: 3 });
    // The next request finds the bulk work running its slice: it is paused again only after PAUSED_SLICE_MS.
    const next = gate.enter();
    expect(gate.turn()).to.equal(undefined);
    clock.now += PAUSED_SLICE_MS;
    const again = gate.turn();
    expect(again).to.be.instanceOf(Promise);
    next();
    await again;
    expect(gate.figures.pauses).to.equal(2);
  });

  it('a request that is not answered within the pause\'s limit holds the bulk work back for the limit, then lets it run as long, taking turns, before the next pause', async () => {
    const clock = { now: 1_000 };
    const gate = new InteractiveGate(5, () => clock.now);
    // A long answer (a slow client): in flight throughout.
    const leave = gate.enter();
    clock.now += PAUSED_SLICE_MS;
    const first = gate.turn();
    expect(first).to.be.instanceOf(Promise);
    await first;
    expect(gate.figures.pauses).to.equal(1);
    // Within the pause's limit after it: turns of the event loop every STEP_TURN_MS, no pause.
    for (let ran = 0; ran < 5 - STEP_TURN_MS; ran += STEP_TURN_MS) {
      clock.now += STEP_TURN_MS;
      await gate.turn();
    }
    expect(gate.figures.pauses).to.equal(1);
    clock.now += STEP_TURN_MS;
    const second = gate.turn();
    expect(gate.figures.pauses).to.equal(2);
    leave();
    await second;
    // Answered: the next request is paused for after PAUSED_SLICE_MS again.
    gate.enter();
    clock.now += PAUSED_SLICE_MS;
    void gate.turn();
    expect(gate.figures.pauses).to.equal(3);
  });

  it('a pause that gives up waits for the limit in real time, not longer', async () => {
    const gate = new InteractiveGate(5);
    gate.enter();
    await new Promise((resolve) => setTimeout(resolve, 1));
    const started = performance.now();
    await gate.turn();
    const waited = performance.now() - started;
    expect(waited).to.be.at.least(4);
    expect(waited).to.be.below(200);
  });
});

describe('what bulk work waited for (InteractiveGate.figures)', () => {
  it('counts the pauses and rate-cap waits it made, and their time, not the calls that did not wait', async () => {
    const clock = { now: 1_000 };
    const gate = new InteractiveGate(10, () => clock.now);
    gate.pause();
    gate.throttle(1_000_000, 1_000_000);
    expect(gate.figures).to.deep.equal({ pauses: 0, pausedMs: 0, rateWaits: 0, rateWaitedMs: 0 });
    const leave = gate.enter();
    const paused = gate.pause()!;
    clock.now += 4;
    leave();
    await paused;
    // 50 kB at 1 MB/s while a request was answered just now: 50 ms.
    await gate.throttle(50_000, 1_000_000);
    expect(gate.figures).to.deep.equal({ pauses: 1, pausedMs: 4, rateWaits: 1, rateWaitedMs: 50 });
  });
});

describe('a loop with no gate at hand takes turns of the event loop (turnsEvery)', () => {
  it('gives nothing to await until its milliseconds have passed, then a turn that lets waiting I/O run, and starts its clock again', async () => {
    const turn = turnsEvery(20);
    expect(turn()).to.equal(undefined);
    const started = performance.now();
    while (performance.now() - started < 25) { /* work that holds the event loop */ }
    let timerRan = false;
    setImmediate(() => { timerRan = true; });
    const waiting = turn();
    expect(waiting).to.be.instanceOf(Promise);
    await waiting;
    expect(timerRan).to.equal(true);
    expect(turn()).to.equal(undefined);
  });
});
