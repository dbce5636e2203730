/** k6/metrics: Counter, Gauge, Rate, Trend. Declared in the init context, as k6 requires. */
import type { Contains, MetricType, Tags } from '../protocol.ts';
import { runtime } from '../vu/runtime.ts';

const NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/;

abstract class Metric {
  readonly name: string;
  private readonly contains: Contains;

  constructor(
    name: string,
    private readonly type: MetricType,
    isTime = false,
  ) {
    if (runtime.phase !== 'init') throw new Error(`metric ${name}: metrics must be declared in the init context`);
    if (!NAME.test(name)) throw new Error(`metric name "${name}": letters, digits and _ only, not starting with a digit, at most 128`);
    this.name = name;
    this.contains = isTime ? 'time' : 'default';
  }

  protected record(value: number, tags: Tags | undefined): boolean {
    if (!Number.isFinite(value)) throw new Error(`metric ${this.name}: ${value} is not a finite number`);
    runtime.emit(this.name, this.type, this.contains, value, tags ?? {});
    return true;
  }
}

export class Counter extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'counter', isTime);
  }
  add(value: number | boolean, tags?: Tags): boolean {
    return this.record(Number(value), tags);
  }
}

export class Gauge extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'gauge', isTime);
  }
  add(value: number | boolean, tags?: Tags): boolean {
    return this.record(Number(value), tags);
  }
}

/** Each add counts as a pass (non-zero / true) or a fail; the rate is passes / adds. */
export class Rate extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'rate', isTime);
  }
  add(value: number | boolean, tags?: Tags): boolean {
    return this.record(value ? 1 : 0, tags);
  }
}

export class Trend extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'trend', isTime);
  }
  add(value: number | boolean, tags?: Tags): boolean {
    return this.record(Number(value), tags);
  }
}

export default { Counter, Gauge, Rate, Trend };
