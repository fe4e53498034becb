import { expect } from 'chai';
import { InteractiveGate } from '../../runtime/interactive.ts';

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
