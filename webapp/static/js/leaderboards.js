// The ability chart of leaderboards/index.html (data from #ability-data).
(function () {
  var chart = window.labCharts && window.labCharts.fromPage("ability-chart", "ability-data");
  if (!chart) return;
  var rows = chart.rows;
  var colour = {human: "#1f7a3a", model: "#2b59c3"};
  var label = function (r) { return (r.kind === "human" ? "person" : "model") + ": θ " + r.theta.toFixed(2) +
    " [" + r.lo.toFixed(2) + ", " + r.hi.toFixed(2) + "], " + r.games + " games"; };
  new Chart(chart.canvas, {
    type: "bar",
    data: {
      labels: rows.map(function (r) { return r.name; }),
      datasets: [
        {type: "scatter", label: "ability θ", order: 1, pointRadius: 5, pointHoverRadius: 7,
         data: rows.map(function (r, i) { return {x: r.theta, y: i}; }),
         backgroundColor: rows.map(function (r) { return colour[r.kind]; })},
        {label: "95% interval", order: 2, barPercentage: 0.35, grouped: false,
         data: rows.map(function (r) { return [r.lo, r.hi]; }),
         backgroundColor: rows.map(function (r) { return colour[r.kind] + "55"; })}
      ]
    },
    options: {
      indexAxis: "y", responsive: true, maintainAspectRatio: false, animation: false,
      scales: {x: {type: "linear", title: {display: true, text: "ability θ (logits; 0 = even odds on an average word)"}},
               y: {type: "category", ticks: {autoSkip: false}}},
      plugins: {legend: {display: false},
                tooltip: {callbacks: {title: function (items) { return rows[items[0].dataIndex].name; },
                                      label: function (ctx) { return label(rows[ctx.dataIndex]); }}}}
    }
  });
})();
