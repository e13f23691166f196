/**
 * A small corpus for semantic search tests: each query is a paraphrase of one row and shares no word with any row,
 * so full-text search cannot find it while a model of meaning can.
 */
export const semanticRows: Array<{ id: number; title: string; body: string }> = [
  { id: 1, title: 'Ergonomic office chair', body: 'Adjustable lumbar support, breathable mesh back and padded armrests.' },
  { id: 2, title: 'Stainless steel kettle', body: 'Boils a litre of water in three minutes; automatic shut-off.' },
  { id: 3, title: 'Waterproof hiking boots', body: 'Leather uppers and grippy soles for muddy mountain trails.' },
  { id: 4, title: 'Noise cancelling headphones', body: 'Wireless over-ear headphones with thirty hours of battery.' },
  { id: 5, title: 'Tomato growing guide', body: 'Plant seedlings after the last frost, water deeply and stake the vines.' },
  { id: 6, title: 'Fixing a dripping faucet', body: 'Replace the worn washer and the O-ring under the handle.' },
  { id: 7, title: 'Vanilla sponge cake', body: 'Cream butter and sugar, fold in flour, bake forty minutes at 180 degrees.' },
  { id: 8, title: 'Falling asleep faster', body: 'Keep the bedroom dark and cool and put screens away an hour before bed.' },
  { id: 9, title: 'Electric vehicle chargers', body: 'Fast charging stations along the motorway network.' },
  { id: 10, title: 'Yoga for back pain', body: 'Gentle stretches that relieve stiffness in the lower spine.' },
  { id: 11, title: 'Dog obedience training', body: 'Reward your puppy with treats when it sits and stays on command.' },
  { id: 12, title: 'Learning to play guitar', body: 'Start with basic chords and strum slowly along to simple songs.' },
  { id: 13, title: 'Saving for retirement', body: 'Put part of each paycheck into a pension fund and let interest compound.' },
  { id: 14, title: 'Cleaning a cast iron pan', body: 'Scrub with coarse salt, dry on the stove and rub with a thin layer of oil.' },
  { id: 15, title: 'Paris travel tips', body: 'Buy a museum pass and visit the Louvre early in the morning.' },
  { id: 16, title: 'Car tyre pressure', body: 'Check inflation monthly with a gauge when the tyres are cold.' },
];

/** Paraphrased queries and the id of the row each means. */
export const paraphrases: Array<{ query: string; id: number }> = [
  { query: 'insomnia remedies', id: 8 },
  { query: 'teach my pet good manners', id: 11 },
  { query: 'beginner music lessons', id: 12 },
  { query: 'automobile plug points', id: 9 },
  { query: 'comfortable desk seating', id: 1 },
  { query: 'sightseeing holidays france', id: 15 },
  { query: 'birthday dessert ideas', id: 7 },
  { query: 'footwear walking hills', id: 3 },
  { query: 'earphones blocking outside sound', id: 4 },
];

/** The query's words as an OR query for SQLite FTS5 (`"a" OR "b"`) and PostgreSQL to_tsquery (`a | b`). */
export const ftsOr = (query: string) => query.split(/\s+/).map((word) => `"${word}"`).join(' OR ');
export const tsOr = (query: string) => query.split(/\s+/).join(' | ');
