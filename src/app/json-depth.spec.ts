import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exceedsJsonDepth, jsonShapeProblem } from './json-depth.js';

const nested = (depth: number, leaf = '1'): string => '['.repeat(depth) + leaf + ']'.repeat(depth);

describe('exceedsJsonDepth: nesting measured on the raw text, without recursion', () => {
  it('counts objects and arrays alike, up to and over the limit', () => {
    assert.equal(exceedsJsonDepth('{"a":[1]}', 2), false);
    assert.equal(exceedsJsonDepth('{"a":[1]}', 1), true);
    assert.equal(exceedsJsonDepth(nested(64), 64), false);
    assert.equal(exceedsJsonDepth(nested(65), 64), true);
    assert.equal(exceedsJsonDepth('{"a":{"b":{}}}', 3), false);
    assert.equal(exceedsJsonDepth('{"a":{"b":{}}}', 2), true);
  });

  it('measures the deepest point, not the number of containers', () => {
    const wide = `[${Array.from({ length: 10_000 }, () => '{"a":[1,2]}').join(',')}]`;
    assert.equal(exceedsJsonDepth(wide, 3), false);
    assert.equal(exceedsJsonDepth(wide, 2), true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    assert.equal(exceedsJsonDepth(JSON.stringify({ text: '[[[[{{{{' }), 1), false);
    assert.equal(exceedsJsonDepth(JSON.stringify({ text: 'say "[[[[" \\ and \\"{{{{' }), 1), false);
    // A string that ends in a backslash: the quote after the escaped backslash closes it.
    assert.equal(exceedsJsonDepth(JSON.stringify({ a: 'x\\', b: [[1]] }), 2), true);
    assert.equal(exceedsJsonDepth(JSON.stringify({ a: 'x\\', b: '[[[' }), 1), false);
    assert.equal(exceedsJsonDepth(JSON.stringify({ [`k[[[`]: '\\\\"]]]' }), 1), false);
  });

  it('leaves malformed text to JSON.parse (never throws)', () => {
    for (const text of ['', '{', '}}}}', '"unterminated [[[', '{"a": "b\\"}', '[[[[', 'null']) {
      assert.equal(exceedsJsonDepth(text, 64), false, text);
    }
    // An unterminated string cannot hide an earlier excess.
    assert.equal(exceedsJsonDepth(`${nested(70).slice(0, 70)}"open`, 64), true);
  });

  it('refuses a hostile depth without deep work (the scan itself cannot overflow)', () => {
    assert.equal(exceedsJsonDepth(nested(1_000_000), 64), true);
    assert.equal(exceedsJsonDepth('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000), 64), true);
  });
});

describe('jsonShapeProblem: items counted on the raw text', () => {
  it('counts objects, arrays and the items after each comma, not what is inside strings', () => {
    assert.equal(jsonShapeProblem('[1,2,3]', 64, 3), null); // the array and two commas
    assert.equal(jsonShapeProblem('[1,2,3,4]', 64, 3), 'too_many_items');
    assert.equal(jsonShapeProblem('{"a":{},"b":[]}', 64, 4), null);
    assert.equal(jsonShapeProblem('{"a":{},"b":[]}', 64, 3), 'too_many_items');
    assert.equal(jsonShapeProblem(JSON.stringify({ text: ',,,,[[{{' }), 64, 1), null);
    assert.equal(jsonShapeProblem(JSON.stringify({ media: 'A'.repeat(1_000_000) }), 64, 1), null);
  });

  it('reports whichever limit the scan crosses first, and nothing when no limit is given', () => {
    assert.equal(jsonShapeProblem('[[[[1]]]]', 2, 2), 'too_deep');
    assert.equal(jsonShapeProblem('[[[[1]]]]', 2, 1), 'too_many_items'); // the second array is item 2
    assert.equal(jsonShapeProblem(`[${'[],'.repeat(1_000_000)}[]]`, 64), null);
    assert.equal(jsonShapeProblem(`[${'[],'.repeat(1_000_000)}[]]`, 64, 100_000), 'too_many_items');
  });
});
