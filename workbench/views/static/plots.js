
document.querySelectorAll('.plotly-figure').forEach(function (div) {
  var spec = JSON.parse(document.getElementById(div.id + '-spec').textContent);
  Plotly.newPlot(div, spec.data, spec.layout, {responsive: true, displaylogo: false});
});
