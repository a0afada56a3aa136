// Live metric charts for run and comparison pages: one chart per metric, one line per job,
// each with a table alternative. Polls while any job is still active.
(function () {
  const root = document.getElementById("charts");
  if (!root || !window.Chart) return;
  const url = root.dataset.metricsUrl;
  const active = new Set(["queued", "running", "stopping"]);
  const colours = ["#2b59c3", "#c3462b", "#1f7a3a", "#8a3ffc", "#b28600", "#007d79"];
  const charts = {};

  function tableFor(name, jobs) {
    const table = document.createElement("table");
    table.className = "data";
    const ids = Object.keys(jobs);
    const steps = [...new Set(ids.flatMap((id) => (jobs[id].metrics[name] || []).map((p) => p[0])))].sort((a, b) => a - b);
    const head = "<thead><tr><th scope=\"col\">step</th>" + ids.map((id) => `<th scope="col">job ${id}</th>`).join("") + "</tr></thead>";
    const rows = steps.map((s) => "<tr><td>" + s + "</td>" + ids.map((id) => {
      const p = (jobs[id].metrics[name] || []).find((q) => q[0] === s);
      return "<td>" + (p ? Number(p[1]).toPrecision(4) : "") + "</td>";
    }).join("") + "</tr>").join("");
    table.innerHTML = head + "<tbody>" + rows + "</tbody>";
    return table;
  }

  function render(data) {
    const jobs = data.jobs;
    const names = [...new Set(Object.values(jobs).flatMap((j) => Object.keys(j.metrics)))].sort();
    const empty = document.getElementById("charts-empty");
    if (empty && names.length) empty.textContent = "";
    names.forEach((name) => {
      const datasets = Object.keys(jobs).map((id, i) => ({
        label: "job " + id,
        data: (jobs[id].metrics[name] || []).map((p) => ({ x: p[0], y: p[1] })),
        borderColor: colours[i % colours.length],
        backgroundColor: colours[i % colours.length],
        pointRadius: 2,
      }));
      let entry = charts[name];
      if (!entry) {
        const figure = document.createElement("figure");
        figure.className = "chart";
        figure.dataset.metric = name;
        const caption = document.createElement("figcaption");
        caption.textContent = name;
        const canvas = document.createElement("canvas");
        canvas.setAttribute("role", "img");
        canvas.setAttribute("aria-label", "chart of " + name + " by step; the table below has the same numbers");
        const details = document.createElement("details");
        details.innerHTML = "<summary>Table of " + name + "</summary>";
        figure.append(caption, canvas, details);
        root.append(figure);
        const chart = new Chart(canvas, {
          type: "line",
          data: { datasets },
          options: { animation: false, parsing: false, scales: { x: { type: "linear", title: { display: true, text: "step" } } } },
        });
        entry = charts[name] = { chart, details };
      } else {
        entry.chart.data.datasets = datasets;
        entry.chart.update();
      }
      const old = entry.details.querySelector("table");
      if (old) old.remove();
      entry.details.append(tableFor(name, jobs));
    });
    return Object.values(jobs).some((j) => active.has(j.status));
  }

  function poll() {
    fetch(url, { credentials: "same-origin" })
      .then((r) => r.json())
      .then((data) => {
        const stillActive = render(data);
        if (root.dataset.live === "1" && stillActive) setTimeout(poll, 3000);
      })
      .catch(() => setTimeout(poll, 10000));
  }
  poll();
})();
