#include "floe/web/prometheus_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace floe::web {
namespace {

// Label values escape backslash, double quote and line feed.
void AppendEscaped(std::string& out, const std::string& value) {
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void AppendValue(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (v == std::floor(v) && std::fabs(v) < 1e15) {
    out += std::to_string(static_cast<int64_t>(v));
  } else {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", v);
    out += buf;
  }
}

}  // namespace

std::string PrometheusText(const std::vector<process::ExposedMetric>& metrics) {
  std::vector<const process::ExposedMetric*> sorted;
  sorted.reserve(metrics.size());
  for (const auto& m : metrics) sorted.push_back(&m);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return a->name < b->name; });
  std::string out;
  const std::string* family = nullptr;
  for (const process::ExposedMetric* m : sorted) {
    if (family == nullptr || *family != m->name) {
      family = &m->name;
      out += "# TYPE " + m->name +
             (m->type == runtime::MetricType::kCounter ? " counter\n" : " gauge\n");
    }
    out += m->name;
    if (!m->labels.empty()) {
      out += '{';
      for (size_t i = 0; i < m->labels.size(); ++i) {
        if (i > 0) out += ',';
        out += m->labels[i].first + "=\"";
        AppendEscaped(out, m->labels[i].second);
        out += '"';
      }
      out += '}';
    }
    out += ' ';
    AppendValue(out, m->value);
    out += '\n';
  }
  return out;
}

}  // namespace floe::web
