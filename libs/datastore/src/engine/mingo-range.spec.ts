import { Int32, Long } from 'bson';
import { runPipeline } from './mingo';

const range = (args: unknown): unknown => runPipeline([{ _id: 1 }], [{ $project: { _id: 0, r: { $range: args } } }])[0]?.['r'];

describe('$range in the embedded engine', () => {
  it('counts up, down and by steps, with BSON numbers as arguments', () => {
    expect(range([0, 5])).toEqual([0, 1, 2, 3, 4]);
    expect(range([5, 0, -2])).toEqual([5, 3, 1]);
    expect(range([0, 10, 4])).toEqual([0, 4, 8]);
    expect(range([new Int32(1), Long.fromNumber(3)])).toEqual([1, 2]);
    expect(range([3, 0])).toEqual([]);
  });

  it("refuses a range over MongoDB's memory limit with ExceededMemoryLimit before building it", () => {
    expect(() => range([0, 2_000_000_000])).toThrow(expect.objectContaining({ code: 146, message: expect.stringMatching(/^\$range would use too much memory/) as unknown }));
    expect(range([0, 100_000])).toHaveLength(100_000);
  });

  it.each([
    ['a step of zero', [0, 10, 0]],
    ['an infinite bound', [0, Infinity]],
    ['a fractional bound', [0, 1.5]],
    ['a bound past 32 bits', [0, 2 ** 40]],
    ['a string bound', ['a', 10]],
    ['one argument', [1]],
  ])('refuses %s with BadValue', (_name, args) => {
    expect(() => range(args)).toThrow(expect.objectContaining({ codeName: 'BadValue' }));
  });
});
