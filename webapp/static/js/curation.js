// The curation funnel chart: kept and dropped words per stage, drawn from the JSON next to the
// canvas. Runs again after every htmx swap of the polled run-page fragment.
(function () {
  function draw() {
    if (!window.Chart) return;
    Object.values(Chart.instances).forEach((c) => { if (!document.body.contains(c.canvas)) c.destroy(); });
    document.querySelectorAll("canvas[data-funnel]").forEach((canvas) => {
      if (canvas.dataset.drawn) return;
      const source = document.getElementById(canvas.dataset.funnel);
      if (!source) return;
      const stages = JSON.parse(source.textContent);
      canvas.dataset.drawn = "1";
      new Chart(canvas, {
        type: "bar",
        data: {
          labels: stages.map((s) => s.stage),
          datasets: [
            { label: "kept", data: stages.map((s) => s.out), backgroundColor: "#2b59c3", stack: "words" },
            { label: "dropped", data: stages.map((s) => s.in - s.out), backgroundColor: "#c3462b", stack: "words" },
          ],
        },
        options: { animation: false, indexAxis: "y", scales: { x: { stacked: true, title: { display: true, text: "words" } }, y: { stacked: true } } },
      });
    });
  }
  if (!window.curationFunnelBound) {
    window.curationFunnelBound = true;
    document.addEventListener("htmx:afterSettle", draw);
  }
  draw();
})();
