// "You ask": under the judge menu, what the chosen judge does (every judge's line without JS).
document.addEventListener("DOMContentLoaded", () => {
  const judge = document.getElementById("ask-judge");
  if (!judge) return;
  const notes = document.querySelectorAll("[data-judge-note]");
  const update = () => notes.forEach((note) => { note.hidden = note.dataset.judgeNote !== judge.value; });
  judge.addEventListener("change", update);
  update();
});

// "The model asks": a guesser that knows only a word pool says so (its note), and the person can
// pick the word from that pool with the browser's autocomplete (a datalist) or draw it from it.
document.addEventListener("DOMContentLoaded", () => {
  const guesser = document.getElementById("judge-guesser");
  if (!guesser) return;
  const pick = document.querySelector(".pick-word");
  const pickRadio = document.getElementById("pick-word-radio");
  const poolWord = document.getElementById("pool-word");
  const wordList = document.getElementById("judge-word-list");
  const notes = document.querySelectorAll("[data-guesser-note]");

  function update() {
    const option = guesser.selectedOptions[0];
    const pool = option ? option.dataset.pool : undefined;
    notes.forEach((note) => { note.hidden = note.dataset.guesserNote !== guesser.value; });
    if (pick) {
      pick.hidden = !pool;
      if (pool) poolWord.setAttribute("list", `pool-words-${pool}`);
      if (!pool && pickRadio.checked) document.querySelector("input[name=draw_word][value='']").checked = true;
    }
    if (pool && wordList) {  // drawing for a pool guesser draws from its pool (by its exact name)
      const entry = [...wordList.options].find((o) => o.value === option.dataset.poolName);
      if (entry) wordList.value = entry.value;
    }
  }
  guesser.addEventListener("change", update);
  if (poolWord) {
    poolWord.addEventListener("focus", () => { pickRadio.checked = true; });
    poolWord.addEventListener("input", () => { pickRadio.checked = true; });
  }
  update();
});
