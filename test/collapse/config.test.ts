import { expect } from 'chai';
import { parseConfig } from '../../src/config/load.js';
import { DEFAULT_COLLAPSE } from '../../src/collapse/options.js';
import { tinyConfig } from '../engine/fixtures.js';

const parse = (over: object) => parseConfig({ ...tinyConfig('/tmp/unused'), ...over });
const error = (over: object) => {
  try {
    parse(over);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a config error');
};

describe('stopOn and collapse in the config', () => {
  it('every run has the watch with its defaults; stopOn is off unless set', () => {
    const c = parse({});
    expect(c.collapse).to.deep.equal(DEFAULT_COLLAPSE);
    expect(c.stopOn).to.equal(undefined);
    expect(parse({ stopOn: 'collapse' }).stopOn).to.equal('collapse');
    expect(parse({ collapse: { entropy: { ratio: 0.2 } } }).collapse.entropy).to.deep.equal({ ratio: 0.2, window: 10 });
  });

  it('an unknown stopOn value or watch setting is an error naming the field and what it accepts', () => {
    expect(error({ stopOn: 'collapsed' })).to.include('stopOn: expected one of "collapse", received "collapsed"');
    expect(error({ stopOn: true })).to.match(/stopOn: /);
    const m = error({ collapse: { heldOut: { drop: 2 }, entropy: { windw: 3 } } });
    expect(m).to.include('collapse.heldOut.drop: expected a number <= 1');
    expect(m).to.include('collapse.entropy.windw: unrecognized key (did you mean "window"?)');
  });
});
