// The shipped keyword -> emoji table behind `emoji: 'auto'`. Pure data and a pure lookup: the same
// words always give the same emoji (no randomness, no locale, no model).

/** Lowercase English keywords (singular, base form) and their emoji. */
// biome-ignore format: a hand-laid table, grouped by theme
export const EMOJI_TABLE: Readonly<Record<string, string>> = Object.freeze({
  // feelings
  love: '❤️', heart: '❤️', happy: '😊', smile: '😊', laugh: '😂', funny: '😂', joke: '😂', lol: '😂',
  sad: '😢', cry: '😢', tear: '😢', angry: '😠', mad: '😠', scared: '😱', fear: '😱', shock: '😱', wow: '🤯',
  amazing: '🤩', awesome: '🤩', incredible: '🤩', cool: '😎', crazy: '🤪', idea: '💡', question: '❓',
  secret: '🤫', surprise: '😮', tired: '😴', sleep: '😴', sick: '🤒', kiss: '😘', hug: '🤗', thank: '🙏',
  please: '🙏', pray: '🙏', hope: '🙏', luck: '🍀', lucky: '🍀', party: '🎉', celebrate: '🎉', congratulation: '🎉',
  birthday: '🎂', gift: '🎁', win: '🏆', winner: '🏆', champion: '🏆', trophy: '🏆', victory: '🏆', goal: '🎯',
  target: '🎯', focus: '🎯', success: '✅', correct: '✅', great: '👍',
  perfect: '👌', stop: '🛑', wrong: '❌', fail: '❌', mistake: '❌', warning: '⚠️', danger: '⚠️',
  // money and work
  money: '💰', cash: '💵', dollar: '💵', pay: '💸', price: '🏷️', cost: '💸', rich: '🤑', profit: '📈', sale: '🏷️',
  business: '💼', job: '💼', office: '🏢', company: '🏢', meeting: '🤝', deal: '🤝', partner: '🤝',
  team: '👥', people: '👥', growth: '📈', grow: '📈', increase: '📈', decrease: '📉', chart: '📊',
  data: '📊', number: '🔢', plan: '📝', note: '📝', write: '✍️', read: '📖', book: '📚', learn: '📚', study: '📚',
  school: '🏫', teacher: '🧑‍🏫', student: '🎓', graduate: '🎓', science: '🔬', test: '🧪', research: '🔬',
  // tech
  phone: '📱', call: '📞', computer: '💻', laptop: '💻', code: '💻', internet: '🌐', website: '🌐', email: '📧',
  message: '💬', chat: '💬', video: '🎬', camera: '📷', photo: '📸', picture: '🖼️', music: '🎵',
  song: '🎶', sing: '🎤', dance: '💃', game: '🎮', robot: '🤖', ai: '🤖', rocket: '🚀', launch: '🚀',
  fast: '⚡', speed: '⚡', power: '⚡', energy: '⚡', battery: '🔋', fire: '🔥', hot: '🔥', trend: '🔥',
  viral: '🔥', lock: '🔒', safe: '🔒', security: '🔒', tool: '🛠️', fix: '🔧',
  build: '🏗️', search: '🔍', watch: '👀', eye: '👀', listen: '👂', hear: '👂',
  // time
  time: '⏰', clock: '⏰', hour: '⏰', minute: '⏱️', today: '📅', tomorrow: '📅', week: '📅',
  calendar: '📅', year: '📅', morning: '🌅', night: '🌙', future: '🔮', history: '📜', 
  finish: '🏁', wait: '⏳', late: '⏳', early: '🌅',
  // world and nature
  world: '🌍', earth: '🌍', planet: '🪐', country: '🗺️', map: '🗺️', travel: '✈️', trip: '✈️', plane: '✈️',
  fly: '✈️', car: '🚗', drive: '🚗', road: '🛣️', train: '🚆', bus: '🚌', bike: '🚲', ship: '🚢', boat: '⛵',
  home: '🏠', house: '🏠', city: '🏙️', sun: '☀️', sunny: '☀️', rain: '🌧️', snow: '❄️', cold: '🥶', wind: '💨',
  storm: '⛈️', weather: '🌦️', tree: '🌳', forest: '🌲', flower: '🌸', plant: '🌱', garden: '🌻', water: '💧',
  ocean: '🌊', sea: '🌊', beach: '🏖️', mountain: '⛰️', sky: '🌤️', star: '⭐', moon: '🌙', wave: '🌊',
  // animals
  dog: '🐶', puppy: '🐶', cat: '🐱', kitten: '🐱', bird: '🐦', fish: '🐟', horse: '🐴', cow: '🐮', pig: '🐷',
  lion: '🦁', tiger: '🐯', bear: '🐻', monkey: '🐵', rabbit: '🐰', snake: '🐍', bee: '🐝', butterfly: '🦋',
  animal: '🐾', pet: '🐾',
  // food
  food: '🍽️', eat: '🍽️', dinner: '🍽️', lunch: '🥪', breakfast: '🥞', cook: '🍳', kitchen: '🍳', pizza: '🍕',
  burger: '🍔', coffee: '☕', tea: '🍵', cake: '🍰', bread: '🍞', apple: '🍎', fruit: '🍓', banana: '🍌',
  chocolate: '🍫', wine: '🍷', beer: '🍺', drink: '🥤', hungry: '😋', delicious: '😋', tasty: '😋',
  // body and health
  health: '🩺', doctor: '🩺', hospital: '🏥', medicine: '💊', brain: '🧠', smart: '🧠', mind: '🧠', muscle: '💪',
  strong: '💪', strength: '💪', gym: '🏋️', workout: '🏋️', exercise: '🏃', run: '🏃', walk: '🚶', sport: '⚽',
  football: '⚽', soccer: '⚽', basketball: '🏀', tennis: '🎾', swim: '🏊', baby: '👶', child: '🧒', kid: '🧒',
  family: '👨‍👩‍👧', friend: '🫂', mom: '👩', mother: '👩', dad: '👨', father: '👨', king: '👑', queen: '👑',
  crown: '👑', hand: '✋', clap: '👏', applause: '👏',
  // misc
  magic: '✨', beautiful: '✨', sparkle: '✨', art: '🎨', paint: '🎨', color: '🎨', colour: '🎨',
  design: '🎨', movie: '🎬', film: '🎬', news: '📰', shop: '🛍️', buy: '🛒', store: '🏪',
  best: '🥇', hundred: '💯',
  diamond: '💎', gold: '🥇', bomb: '💣', boom: '💥', explode: '💥', gun: '🔫', police: '🚓', law: '⚖️',
  justice: '⚖️', vote: '🗳️', flag: '🚩', peace: '☮️', war: '⚔️', ghost: '👻', skull: '💀', dead: '💀',
  christmas: '🎄', halloween: '🎃', summer: '☀️', winter: '❄️', spring: '🌷', autumn: '🍂',
});

/** The table key for a word: lowercase letters and digits only, then simple English base forms. */
function candidates(word: string): string[] {
  const w = word.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
  if (w.length < 2) return [];
  const out = [w];
  if (w.endsWith('ies') && w.length > 4) out.push(`${w.slice(0, -3)}y`);
  if (w.endsWith('es') && w.length > 3) out.push(w.slice(0, -2));
  if (w.endsWith('s') && !w.endsWith('ss') && w.length > 3) out.push(w.slice(0, -1));
  if (w.endsWith('ing') && w.length > 5) out.push(w.slice(0, -3), `${w.slice(0, -3)}e`, w.slice(0, -4));
  if (w.endsWith('ed') && w.length > 4) out.push(w.slice(0, -2), w.slice(0, -1), w.slice(0, -3));
  return out;
}

/** The emoji for one word, or null. */
export function emojiForWord(word: string): string | null {
  for (const c of candidates(word)) {
    const e = Object.hasOwn(EMOJI_TABLE, c) ? EMOJI_TABLE[c] : undefined;
    if (e) return e;
  }
  return null;
}

/**
 * The one emoji of a page: the emphasised word's when it has one, else the first word (reading
 * order) that has one. Returns the word's index in `words`, or null when no word matches.
 */
export function pickPageEmoji(words: readonly string[], emphasized: ReadonlySet<number> = new Set()): { emoji: string; word: number } | null {
  for (const i of [...emphasized].sort((a, b) => a - b)) {
    const e = words[i] !== undefined ? emojiForWord(words[i]!) : null;
    if (e) return { emoji: e, word: i };
  }
  for (let i = 0; i < words.length; i++) {
    const e = emojiForWord(words[i]!);
    if (e) return { emoji: e, word: i };
  }
  return null;
}
