// Charts of a game's turns (Chart.js, vendored). The data comes from the json_script "chart-data";
// every chart has a table alternative in the page. Clicking a point jumps to that turn's row.
(function () {
  "use strict";
  var source = document.getElementById("chart-data");
  if (!source || !window.Chart) return;
  var data = JSON.parse(source.textContent);
  var palette = ["#2b59c3", "#b3261e", "#1f7a3a", "#a05a00", "#6b3fa0", "#00798c"];
  var charts = {};

  function baseOptions(extra) {
    var options = {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: "index", intersect: false },
      plugins: {
        tooltip: {
          callbacks: {
            title: function (items) {
              var i = items[0].dataIndex;
              return data.labels[i] + ": " + data.questions[i];
            },
          },
        },
      },
      onClick: function (_event, elements) {
        if (elements.length) window.location.hash = "turn-" + (elements[0].index + 1);
      },
    };
    return Object.assign(options, extra || {});
  }

  function make(id, config) {
    var canvas = document.getElementById(id);
    if (!canvas) return;
    charts[id] = new window.Chart(canvas, config);
  }

  make("chart-belief", {
    type: "line",
    data: {
      labels: data.labels,
      datasets: [
        { label: "log belief in the secret", data: data.belief, borderColor: palette[0], backgroundColor: palette[0], spanGaps: true, yAxisID: "y" },
        { label: "ΔBelief", data: data.delta_belief, type: "bar", backgroundColor: "rgba(179, 38, 30, 0.55)", yAxisID: "y" },
      ],
    },
    options: baseOptions(),
  });

  // A log scale keeps the late turns (tens of words out of thousands) readable; an empty set (0)
  // has no place on it and is left out (the page says why the set went empty).
  var left = data.candidates_left.map(function (v) { return v === null || v <= 0 ? null : v; });
  make("chart-candidates", {
    type: "line",
    data: {
      labels: data.labels,
      datasets: [{ label: data.candidates_label || "candidates left", data: left, borderColor: palette[2], backgroundColor: palette[2], spanGaps: true }],
    },
    options: baseOptions({
      scales: { y: { type: "logarithmic", title: { display: true, text: (data.candidates_axis || "candidates") + " (log scale)" } } },
    }),
  });

  var parts = Object.keys(data.reward_parts);
  make("chart-reward", {
    type: "bar",
    data: {
      labels: data.labels,
      datasets: parts.map(function (name, i) {
        return { label: name, data: data.reward_parts[name], backgroundColor: palette[(i + 1) % palette.length] };
      }),
    },
    options: baseOptions({ scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: "reward" } } } }),
  });

  window.trajectoryCharts = charts;
})();
