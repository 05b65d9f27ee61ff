// Sorting, filtering, chart toggles and the launch list. The page is complete without this script,
// except for the list of every launch, which is paged here from the page's inline JSON table.
(function () {
  "use strict";
  var table = document.getElementById("kernel-table");
  function collapseLaunches() {
    Array.prototype.forEach.call(document.querySelectorAll("tr.launch-rows"), function (r) { r.remove(); });
    Array.prototype.forEach.call(document.querySelectorAll("button.expand"), function (b) {
      b.setAttribute("aria-expanded", "false");
    });
  }
  if (table) {
    var tbody = table.tBodies[0];
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      if (!th.hasAttribute("data-sort")) return;
      th.addEventListener("click", function () {
        var numeric = th.getAttribute("data-sort") === "num";
        var asc = !th.classList.contains("asc");
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        collapseLaunches();
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
          if (numeric) {
            var fx = x === "" || x === null ? NaN : parseFloat(x), fy = y === "" || y === null ? NaN : parseFloat(y);
            if (isNaN(fx) && isNaN(fy)) return 0;
            if (isNaN(fx)) return 1;            // not available: always last
            if (isNaN(fy)) return -1;
            return asc ? fx - fy : fy - fx;
          }
          x = (x || "").toLowerCase(); y = (y || "").toLowerCase();
          return asc ? (x < y ? -1 : x > y ? 1 : 0) : (x < y ? 1 : x > y ? -1 : 0);
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
      });
    });
    var filter = document.getElementById("kernel-filter");
    if (filter) {
      filter.addEventListener("input", function () {
        collapseLaunches();
        var q = filter.value.toLowerCase();
        Array.prototype.forEach.call(tbody.rows, function (r) {
          var name = (r.getAttribute("data-name") || "").toLowerCase();
          r.classList.toggle("hidden", q !== "" && name.indexOf(q) < 0);
        });
      });
    }
  }
  Array.prototype.forEach.call(document.querySelectorAll("input[data-toggle-level]"), function (box) {
    box.addEventListener("change", function () {
      document.body.classList.toggle("hide-" + box.getAttribute("data-toggle-level"), !box.checked);
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("input[data-toggle-roof]"), function (box) {
    box.addEventListener("change", function () {
      var name = box.getAttribute("data-toggle-roof");
      Array.prototype.forEach.call(document.querySelectorAll('[id="roof-' + name + '"], [data-roof="' + name + '"]'),
        function (el) { el.style.display = box.checked ? "" : "none"; });
    });
  });
  launchList();
  Array.prototype.forEach.call(document.querySelectorAll("[data-open-all]"), function (btn) {
    btn.addEventListener("click", function () {
      var open = btn.getAttribute("data-open-all") === "1";
      Array.prototype.forEach.call(document.querySelectorAll("details.kernel"), function (d) { d.open = open; });
    });
  });

  // ---------------------------------------------------------------- the launch list (paged)
  // The launches come as columns (`views.groups.launch_data`): rows [index, group, ns, limit, permille, regime,
  // nvtx], each index the sum of the differences before it; a column left out is all null.
  function launchRows(data) {
    var names = ["index", "group", "ns", "limit", "permille", "regime", "nvtx"];
    var cols = names.map(function (n) { return data.columns[n] || null; });
    var rows = new Array(data.count), index = 0;
    for (var i = 0; i < data.count; i++) {
      var row = new Array(names.length);
      for (var c = 0; c < names.length; c++) row[c] = cols[c] ? cols[c][i] : null;
      index += row[0];
      row[0] = index;
      rows[i] = row;
    }
    return rows;
  }

  function launchList() {
    var holder = document.getElementById("launch-list");
    var source = document.getElementById("report-data");
    if (!holder || !source) return;
    var data = JSON.parse(source.textContent).launches;
    var rows = launchRows(data), groups = data.groups;
    var perGroup = null;
    holder.appendChild(pager(rows, 25, true));
    Array.prototype.forEach.call(document.querySelectorAll("button.expand"), function (btn) {
      btn.addEventListener("click", function () {
        var tr = btn.closest("tr");
        var open = tr.nextElementSibling && tr.nextElementSibling.classList.contains("launch-rows");
        if (open) {
          tr.nextElementSibling.remove();
          btn.setAttribute("aria-expanded", "false");
          return;
        }
        if (perGroup === null) {
          perGroup = {};
          rows.forEach(function (r) { (perGroup[r[1]] = perGroup[r[1]] || []).push(r); });
        }
        var row = document.createElement("tr");
        row.className = "launch-rows";
        var cell = document.createElement("td");
        cell.colSpan = tr.cells.length;
        cell.appendChild(pager(perGroup[btn.getAttribute("data-expand")] || [], 20, false));
        row.appendChild(cell);
        tr.parentNode.insertBefore(row, tr.nextSibling);
        btn.setAttribute("aria-expanded", "true");
      });
    });

    function el(tag, className, text) {
      var e = document.createElement(tag);
      if (className) e.className = className;
      if (text !== undefined) e.textContent = text;
      return e;
    }
    function g3(x) { return String(Number(x.toPrecision(3))); }
    function seconds(ns) {
      if (ns === null) return "n/a";
      var s = ns * 1e-9;
      if (s >= 1) return g3(s) + " s";
      if (s >= 1e-3) return g3(s * 1e3) + " ms";
      if (s >= 1e-6) return g3(s * 1e6) + " µs";
      return g3(ns) + " ns";
    }
    // One paged table over `all` (rows of data.rows); `withKernel`: a kernel column and a filter box.
    function pager(all, size, withKernel) {
      var box = el("div", "pager");
      var controls = el("div", "pager-controls");
      var search = null;
      if (withKernel) {
        search = el("input");
        search.type = "search";
        search.placeholder = data.nvtx.length ? "filter by kernel or NVTX range" : "filter by kernel";
        search.setAttribute("aria-label", "filter launches by kernel or NVTX range");
        controls.appendChild(search);
      }
      var prev = el("button", "", "‹ previous"), next = el("button", "", "next ›"), status = el("span", "muted");
      prev.type = next.type = "button";
      controls.appendChild(prev); controls.appendChild(status); controls.appendChild(next);
      box.appendChild(controls);
      var tableEl = el("table", "kernels launch-table"), head = el("thead"), body = el("tbody");
      var columns = [["#", 0, "num"]];
      if (withKernel) columns.push(["Kernel", 1, "str"]);
      var reports = data.reports || [], withReport = withKernel && reports.length > 1;  // a multi-report page
      if (withReport) columns.push(["Report", 7, "str"]);
      columns.push(["Duration", 2, "num"], ["Busiest limit", 3, "str"], ["Utilisation", 4, "num"], ["Regime", 5, "str"]);
      var withNvtx = data.nvtx.length > 0;
      if (withNvtx) columns.push(["NVTX", 6, "str"]);
      var hr = el("tr");
      var sortCol = 0, asc = true;
      columns.forEach(function (c) {
        var th = el("th", "", c[0]);
        th.setAttribute("data-sort", c[2]);
        th.addEventListener("click", function () {
          asc = sortCol === c[1] ? !asc : c[2] === "str";
          sortCol = c[1];
          Array.prototype.forEach.call(hr.cells, function (h) { h.classList.remove("asc", "desc"); });
          th.classList.add(asc ? "asc" : "desc");
          refresh("sort");
        });
        hr.appendChild(th);
      });
      head.appendChild(hr);
      tableEl.appendChild(head); tableEl.appendChild(body);
      box.appendChild(tableEl);
      var page = 0, shown = all;
      function key(r, col) {
        if (col === 1) return groups[r[1]].name.toLowerCase();
        if (col === 3) return r[3] === null ? null : data.limits[r[3]].label.toLowerCase();
        if (col === 5) return r[5] === null ? null : data.regimes[r[5]];
        if (col === 6) return r[6] === null ? null : data.nvtx[r[6]].toLowerCase();
        if (col === 7) return reports[groups[r[1]].report].toLowerCase();
        return r[col];
      }
      function order() {
        shown.sort(function (a, b) {
          var x = key(a, sortCol), y = key(b, sortCol);
          if (x === null && y === null) return a[0] - b[0];
          if (x === null) return 1;              // not available: always last
          if (y === null) return -1;
          if (x < y) return asc ? -1 : 1;
          if (x > y) return asc ? 1 : -1;
          return a[0] - b[0];
        });
      }
      // what: "filter" (the box changed), "sort" (a column was clicked) or "page".
      function refresh(what) {
        if (what === "filter" && search) {
          var q = search.value.toLowerCase();
          if (q === "") {
            shown = all.slice();
          } else {
            var groupHit = groups.map(function (g) {
              return g.name.toLowerCase().indexOf(q) >= 0 ||
                (withReport && reports[g.report].toLowerCase().indexOf(q) >= 0);
            });
            var nvtxHit = data.nvtx.map(function (n) { return n.toLowerCase().indexOf(q) >= 0; });
            shown = all.filter(function (r) { return groupHit[r[1]] || (r[6] !== null && nvtxHit[r[6]]); });
          }
          page = 0;
        }
        if (what !== "page") order();
        var pages = Math.max(1, Math.ceil(shown.length / size));
        page = Math.max(0, Math.min(page, pages - 1));
        render(pages);
      }
      function render(pages) {
        var frag = document.createDocumentFragment();
        shown.slice(page * size, page * size + size).forEach(function (r) {
          var tr = el("tr");
          tr.setAttribute("data-launch", r[0]);
          tr.appendChild(el("td", "num", String(r[0])));
          if (withKernel) {
            var g = groups[r[1]], td = el("td");
            if (g.section) {
              var a = el("a", "", g.name);
              a.href = "#" + g.id;
              td.appendChild(a);
            } else {
              td.textContent = g.name;
            }
            tr.appendChild(td);
          }
          if (withReport) tr.appendChild(el("td", "", reports[groups[r[1]].report]));
          tr.appendChild(el("td", "num", seconds(r[2])));
          var bound = el("td");
          if (r[3] !== null) {
            var limit = data.limits[r[3]], badge = el("span", "badge " + limit.css, limit.label);
            badge.title = limit.title;
            bound.appendChild(badge);
          } else {
            bound.appendChild(el("span", "muted", "n/a"));
          }
          tr.appendChild(bound);
          tr.appendChild(el("td", "num", r[4] === null ? "n/a" : Math.round(r[4] / 10) + " %"));
          tr.appendChild(el("td", "", r[5] === null ? "n/a" : data.regimes[r[5]]));
          if (withNvtx) tr.appendChild(el("td", "mono", r[6] === null ? "" : data.nvtx[r[6]]));
          frag.appendChild(tr);
        });
        body.textContent = "";
        body.appendChild(frag);
        status.textContent = " " + (shown.length ? (page * size + 1) + "–" + Math.min(shown.length, (page + 1) * size) :
          "0") + " of " + shown.length.toLocaleString("en") + (shown.length === 1 ? " launch" : " launches") +
          " (page " + (page + 1) + " of " + pages + ") ";
        prev.disabled = page === 0;
        next.disabled = page >= pages - 1;
      }
      prev.addEventListener("click", function () { page -= 1; refresh("page"); });
      next.addEventListener("click", function () { page += 1; refresh("page"); });
      if (search) search.addEventListener("input", function () { refresh("filter"); });
      shown = all.slice();
      refresh("page");
      return box;
    }
  }
})();
