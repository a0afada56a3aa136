// The judges' accuracy chart of labelling/judges.html (data from #accuracy-data).
(function () {
  var chart = window.labCharts && window.labCharts.fromPage("accuracy-chart", "accuracy-data");
  if (!chart) return;
  var rows = chart.rows;
  var pc = function (x) { return x === null ? null : 100 * x; };
  new Chart(chart.canvas, {
    type: "bar",
    data: {
      labels: rows.map(function (r) { return r.judge; }),
      datasets: [
        {label: "accuracy (%)", data: rows.map(function (r) { return pc(r.value); }), backgroundColor: "#2b59c3aa", order: 2},
        {type: "bar", label: "95% interval", grouped: false, barPercentage: 0.15, order: 1, backgroundColor: "#1d2330",
         data: rows.map(function (r) { return r.lo === null ? null : [pc(r.lo), pc(r.hi)]; })}
      ]
    },
    options: {
      indexAxis: "y", responsive: true, maintainAspectRatio: false, animation: false,
      scales: {x: {min: 0, max: 100, title: {display: true, text: "accuracy against gold (%)"}}, y: {ticks: {autoSkip: false}}},
      plugins: {legend: {display: false}, tooltip: {callbacks: {label: function (ctx) {
        var r = rows[ctx.dataIndex];
        return pc(r.value).toFixed(1) + "% [" + (r.lo === null ? "–" : pc(r.lo).toFixed(1) + ", " + pc(r.hi).toFixed(1)) + "], n = " + r.n;
      }}}}
    }
  });
})();
