/**
 * A three-minute English talk for the chunked-versus-whole transcription test: varied sentences (no sentence twice,
 * so a transcript that repeats or skips a passage shows), each spoken by espeak-ng on its own and joined with pauses
 * of 0.6–1.4 s, as between the sentences of someone reading aloud. 16 kHz mono 16-bit WAV. The voice is espeak-ng's
 * American English at its default speed: Whisper base mishears it less than the British default (5.0 % against 6.0 %
 * of the script's words in one pass over the talk), so a difference between two transcripts of it says more about
 * how they were made than about the model's guessing.
 */
import path from 'node:path';
import { joinWithPauses, pcmBytes, RATE, writeWav } from './media-factory';
import { speak } from './speech-samples';

/** Ordinary prose on everyday subjects; nothing chosen or tuned for the engine. */
const TALK_SENTENCES = [
  'Good evening and welcome to our small meeting about the new community garden.',
  'Last spring the city gave us the empty field behind the railway station.',
  'At first the ground was hard and full of stones and broken glass.',
  'Twenty neighbours came every Saturday morning to clean it up.',
  'We carried away more than forty bags of rubbish in the first month.',
  'Then a local farmer lent us his tractor for a whole weekend.',
  'The soil was tested by a student from the university.',
  'She told us that it was safe for growing vegetables and flowers.',
  'We built twelve raised beds out of old wooden boards.',
  'Each family looks after one bed and shares the tools in the shed.',
  'The children planted tomatoes, beans, carrots and a few pumpkins.',
  'Water comes from a large tank that collects the rain from the roof.',
  'In July it did not rain for three weeks, and the tank ran dry.',
  'The fire brigade kindly brought us water in their truck.',
  'Since then we have bought a second tank and a longer hose.',
  'Our oldest member is eighty four years old and grows potatoes.',
  'He says the secret is patience and a little music in the morning.',
  'Every Sunday afternoon we meet for coffee and cake under the apple tree.',
  'New people often join us after they walk past and smell the herbs.',
  'The bakery on the corner gives us bread that did not sell the day before.',
  'In return we bring them fresh basil and parsley for their sandwiches.',
  'The school uses the garden for lessons about plants and insects.',
  'Last week the pupils counted seven kinds of butterflies.',
  'We also put up two boxes for birds and a small hotel for bees.',
  'A few problems remain, and I want to talk about them honestly.',
  'Some tools have gone missing from the shed during the summer.',
  'We will fit a stronger lock and keep a list of who borrows what.',
  'The path to the gate becomes muddy whenever it rains.',
  'A builder has offered to lay gravel if we pay for the material.',
  'That will cost about six hundred euros in total.',
  'We plan to raise the money with a market in September.',
  'Everyone can sell jam, honey, seedlings or things they have made.',
  'The music school has promised to send a band for the afternoon.',
  'If the weather is bad, the market moves into the church hall.',
  'Please write your name on the list by the door if you can help.',
  'We need people to carry tables, bake cakes and sell tickets.',
  'Next year we would like to plant a row of fruit trees along the fence.',
  'The council may give us a grant for trees and a new bench.',
  'Thank you all for coming tonight and for your hard work this year.',
  'Now let us have some tea and talk about your ideas.',
  'The first question came from a young mother with a baby.',
  'She asked whether the garden could open earlier on weekdays.',
];

/**
 * `<dir>/talk.wav`: the talk's sentences in order until at least `seconds` of sound (about three minutes with all of
 * them); answers the file, its length in seconds, the script (the sentences spoken) and each sentence's time span.
 */
export async function talkRecording(
  dir: string,
  seconds = 180,
): Promise<{ file: string; seconds: number; script: string[]; spans: [number, number][] }> {
  const runs: Int16Array[] = [];
  const script: string[] = [];
  let total = 0;
  for (const sentence of TALK_SENTENCES) {
    if (total >= seconds) break;
    const pcm = await pcmBytes(await speak(sentence, 'en-us', dir, `talk-${runs.length}`));
    const run = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
    runs.push(run);
    script.push(sentence);
    total += run.length / RATE + 1;
  }
  const { samples, spans } = joinWithPauses(runs, (i) => 0.6 + ((i * 3) % 5) * 0.2);
  const file = path.join(dir, 'talk.wav');
  await writeWav(file, samples);
  return { file, seconds: samples.length / RATE, script, spans };
}
