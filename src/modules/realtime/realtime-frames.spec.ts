import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameRefusal, parseClientFrame } from './realtime-frames.js';

describe('parseClientFrame', () => {
  it('reads the two client frames', () => {
    assert.deepEqual(parseClientFrame('{"type":"session.authenticate","token":"rt_x"}'), { type: 'session.authenticate', token: 'rt_x' });
    assert.deepEqual(parseClientFrame('{"type":"turn.commit","turnId":"a-Z_9","text":""}'), { type: 'turn.commit', turnId: 'a-Z_9', text: '' });
    assert.deepEqual(parseClientFrame(`{"type":"turn.commit","turnId":"${'x'.repeat(80)}","text":"hi"}`).type, 'turn.commit');
  });

  const refusals: Array<[string, string, string, string | undefined]> = [
    ['not JSON', '{', 'realtime.invalid_frame', undefined],
    ['an array', '[]', 'realtime.invalid_frame', undefined],
    ['null', 'null', 'realtime.invalid_frame', undefined],
    ['a string', '"turn.commit"', 'realtime.invalid_frame', undefined],
    ['no type', '{"turnId":"a"}', 'realtime.invalid_frame', undefined],
    ['type not a string', '{"type":1}', 'realtime.invalid_frame', undefined],
    ['unknown type', '{"type":"session.update"}', 'realtime.unknown_frame_type', undefined],
    ['a text delta', '{"type":"input_text.delta","delta":"Hel"}', 'realtime.input_mode_unsupported', undefined],
    ['an append', '{"type":"turn.append","turnId":"a","text":"x"}', 'realtime.input_mode_unsupported', undefined],
    ['an input buffer', '{"type":"input_audio_buffer.commit"}', 'realtime.input_mode_unsupported', undefined],
    ['token not a string', '{"type":"session.authenticate","token":5}', 'realtime.invalid_frame', undefined],
    ['authenticate with more', '{"type":"session.authenticate","token":"x","sessionId":"s"}', 'realtime.unknown_field', undefined],
    ['empty turnId', '{"type":"turn.commit","turnId":"","text":"x"}', 'realtime.invalid_turn_id', undefined],
    ['81-character turnId', `{"type":"turn.commit","turnId":"${'x'.repeat(81)}","text":"x"}`, 'realtime.invalid_turn_id', undefined],
    ['turnId with a space', '{"type":"turn.commit","turnId":"a b","text":"x"}', 'realtime.invalid_turn_id', undefined],
    ['turnId with a dot', '{"type":"turn.commit","turnId":"a.b","text":"x"}', 'realtime.invalid_turn_id', undefined],
    ['turnId not ASCII', '{"type":"turn.commit","turnId":"é","text":"x"}', 'realtime.invalid_turn_id', undefined],
    ['turnId a number', '{"type":"turn.commit","turnId":1,"text":"x"}', 'realtime.invalid_turn_id', undefined],
    ['no text', '{"type":"turn.commit","turnId":"t"}', 'realtime.invalid_frame', 't'],
    ['text not a string', '{"type":"turn.commit","turnId":"t","text":["x"]}', 'realtime.invalid_frame', 't'],
    ['unknown field of a commit', '{"type":"turn.commit","turnId":"t","text":"x","voice":"v"}', 'realtime.unknown_field', 't'],
  ];
  for (const [name, text, code, turnId] of refusals) {
    it(`refuses ${name} with ${code}`, () => {
      assert.throws(
        () => parseClientFrame(text),
        (error: unknown) => error instanceof FrameRefusal && error.code === code && error.turnId === turnId,
      );
    });
  }
});
