// Shared by the pages that draw one Chart.js chart from a JSON block of json_script
// (labelling/judges.html, leaderboards/index.html); loaded before the page's own script.
window.labCharts = {
  // The canvas `canvasId` with its box sized, and the rows of the JSON block `dataId`; null when
  // the page has no such canvas or Chart.js did not load.
  fromPage: function (canvasId, dataId) {
    var canvas = document.getElementById(canvasId);
    if (!canvas || !window.Chart) return null;
    // the box height from data-height (a style attribute would need style-src 'unsafe-inline')
    var box = canvas.parentElement;
    if (box.dataset.height) box.style.height = box.dataset.height + "px";
    return {canvas: canvas, rows: JSON.parse(document.getElementById(dataId).textContent)};
  }
};
