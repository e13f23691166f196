/** Types for wink-porter2-stemmer (the package ships none): the Porter2 ("English" Snowball) stemmer of one word. */
declare module 'wink-porter2-stemmer' {
  const stem: (word: string) => string;
  export default stem;
}
