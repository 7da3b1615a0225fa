// The action bar's pure parts under node (no browser): the noderange folding of the results
// panel (xcoll's grouping) and the reading of a job's stream lines. ctest: web_actions_unit.
import assert from 'node:assert/strict';
import { foldNames } from '../../web/src/noderange.js';
import { nodeResult, errorText } from '../../web/src/actions.js';

// consecutive numbers of one prefix, suffix and width make one run; the rest stay as they are
assert.equal(foldNames(['cn03', 'cn01', 'cn02', 'cn07']), 'cn[01-03],cn07');
assert.equal(foldNames(['cn1', 'cn2', 'cn10', 'cn11']), 'cn[1-2],cn[10-11]'); // widths apart
assert.equal(foldNames(['r1n2', 'r1n3', 'r2n1', 'mgmt', 'x-a']), 'mgmt,r1n[2-3],r2n1,x-a');
assert.equal(foldNames(['cn01-ib', 'cn02-ib', 'cn01']), 'cn01,cn[01-02]-ib');
assert.equal(foldNames(['cn01', 'cn01']), 'cn01'); // a node once
assert.equal(foldNames([]), '');
const many = Array.from({ length: 10000 }, (_, i) => `n${String(i).padStart(5, '0')}`);
assert.equal(foldNames(many), 'n[00000-09999]');

// a node's line: the value under the action's key, nodeshell's detail shape, or the API's words
assert.deepEqual(nodeResult({ node: 'a', rc: 0, power: 'on' }, 'power'), { node: 'a', failed: false, text: 'on' });
assert.deepEqual(nodeResult({ node: 'a', rc: 0, stdout: ['Network'], stderr: [] }, 'nextboot'), {
  node: 'a',
  failed: false,
  text: 'Network',
});
assert.deepEqual(
  nodeResult({ node: 'b', rc: 1, error: 'timeout', message: 'timeout (no answer from 10.0.0.9:623)' }, 'power'),
  { node: 'b', failed: true, text: 'timeout (no answer from 10.0.0.9:623)' },
);
assert.deepEqual(nodeResult({ node: 'b', rc: -1, error: 'no-bmc' }, 'power'), { node: 'b', failed: true, text: 'no-bmc' });
assert.deepEqual(nodeResult({ node: 'c', rc: 0, eventlog: ['x', 'y'] }, 'eventlog').text, 'x\ny');

// a refused call: the API's list of messages, one a line
assert.equal(errorText({ message: 'a,b', body: { error: ['a', 'b'] } }), 'a\nb');
assert.equal(errorText({ message: 'Missed Action.', body: { error: 'Missed Action.' } }), 'Missed Action.');
console.log('actions_unit: ok');
