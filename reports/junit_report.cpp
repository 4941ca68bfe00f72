#include "reports/junit_report.hpp"

#include <fmt/format.h>
#include <map>
#include <tuple>
#include <vector>

namespace moe {
namespace {

std::string xml_escape(const std::string& s) {
  std::string o;
  for (const unsigned char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\n': o += "&#x0A;"; break;
      default:
        o += ch < 0x20 && ch != '\t' && ch != '\r' ? ' ' : char(ch);  // XML 1.0 has no other control characters
    }
  }
  return o;
}

// CDATA cannot hold "]]>" (split across two sections) nor control characters other than tab and line ends.
std::string cdata(std::string s) {
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') ch = ' ';
  std::string o = "<![CDATA[";
  std::size_t from = 0, at;
  while ((at = s.find("]]>", from)) != std::string::npos) {
    o += s.substr(from, at + 2 - from) + "]]><![CDATA[";
    from = at + 2;
  }
  return o + s.substr(from) + "]]>";
}

}  // namespace

std::string gtest_test_name(const std::string& id) {
  std::string s = id;
  for (char& c : s)
    if (c == '-' || c == ':') c = '_';
  return s;
}

std::string to_junit_xml(const RunReport& r) {
  std::vector<std::string> order;  // kernels in the order their first record appears
  std::map<std::string, std::vector<const CaseRecord*>> by_kernel;
  std::map<std::string, std::vector<std::string>> unjudged;  // kernel -> case ids
  auto kernel_seen = [&](const std::string& k) {
    if (!by_kernel.count(k) && !unjudged.count(k)) order.push_back(k);
  };
  for (const CaseRecord& c : r.cases) {
    kernel_seen(c.kernel);
    by_kernel[c.kernel].push_back(&c);
  }
  for (const auto& [k, id] : r.unjudged) {
    kernel_seen(k);
    unjudged[k].push_back(id);
  }
  // An incomplete run's tests without a record are errors: listed one by one when the run knew them, else (a report
  // rebuilt from a killed run's journal, which keeps only their number) as one test that says so.
  const std::string not_judged = "NOT JUDGED: " + (r.provenance.incomplete_reason.empty()
                                                       ? std::string("the run is incomplete")
                                                       : r.provenance.incomplete_reason);
  const bool anonymous = r.provenance.incomplete && r.unjudged.empty();
  auto counts = [](const std::vector<const CaseRecord*>& cs) {
    int fail = 0, skip = 0, err = 0;
    for (const CaseRecord* c : cs) {
      fail += c->status == Status::fail;
      err += c->status == Status::error;
      skip += c->status == Status::skip;
    }
    return std::tuple{fail, skip, err};
  };
  std::vector<const CaseRecord*> all;
  for (const CaseRecord& c : r.cases) all.push_back(&c);
  const auto [all_fail, all_skip, all_err] = counts(all);
  const std::size_t extra = r.unjudged.size() + (anonymous ? 1 : 0);
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += fmt::format("<testsuites tests=\"{}\" failures=\"{}\" skipped=\"{}\" disabled=\"0\" errors=\"{}\" "
                   "timestamp=\"{}\" name=\"AllTests\">\n",
                   r.cases.size() + extra, all_fail, all_skip, all_err + extra, xml_escape(r.provenance.start_time));
  for (const std::string& k : order) {
    const auto& cs = by_kernel[k];
    const auto& missing = unjudged[k];
    const auto [fail, skip, err] = counts(cs);
    s += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" disabled=\"0\" errors=\"{}\">\n",
                     xml_escape(k), cs.size() + missing.size(), fail, skip, err + missing.size());
    for (const CaseRecord* c : cs) {
      const auto colon = c->source.rfind(':');
      s += fmt::format("    <testcase name=\"{}\" file=\"{}\" line=\"{}\" status=\"run\" result=\"{}\" classname=\"{}\">\n",
                       xml_escape(c->id), xml_escape(colon == std::string::npos ? c->source : c->source.substr(0, colon)),
                       colon == std::string::npos ? "0" : c->source.substr(colon + 1),
                       c->status == Status::skip ? "skipped" : "completed", xml_escape(k));
      s += "      <properties>\n";
      for (const auto& [name, v] : c->metrics)
        s += fmt::format("        <property name=\"{}\" value=\"{:.9g}\"/>\n", xml_escape(name), v);
      s += fmt::format("        <property name=\"variant\" value=\"{}\"/>\n", xml_escape(c->variant));
      s += fmt::format("        <property name=\"verdict\" value=\"{}\"/>\n", xml_escape(to_string(c->status)));
      s += "      </properties>\n";
      if (c->status == Status::skip)
        s += fmt::format("      <skipped message=\"{}\">{}</skipped>\n", xml_escape(c->reason), cdata(c->reason));
      else if (c->status == Status::fail)
        s += fmt::format("      <failure message=\"{}\" type=\"\">{}</failure>\n", xml_escape("FAIL " + c->reason),
                         cdata("FAIL " + c->reason + "\n" + c->details));
      else if (c->status == Status::error)
        s += fmt::format("      <error message=\"{}\" type=\"\">{}</error>\n",
                         xml_escape("HARNESS ERROR (not a kernel verdict): " + c->reason),
                         cdata("HARNESS ERROR (not a kernel verdict): " + c->reason + "\n" + c->details));
      s += "    </testcase>\n";
    }
    for (const std::string& id : missing)
      s += fmt::format("    <testcase name=\"{}\" status=\"notrun\" result=\"interrupted\" classname=\"{}\">\n"
                       "      <error message=\"{}\" type=\"\">{}</error>\n    </testcase>\n",
                       xml_escape(id), xml_escape(k), xml_escape(not_judged), cdata(not_judged));
    s += "  </testsuite>\n";
  }
  if (anonymous)
    s += fmt::format("  <testsuite name=\"moe-harness\" tests=\"1\" failures=\"0\" skipped=\"0\" disabled=\"0\" errors=\"1\">\n"
                     "    <testcase name=\"unjudged tests\" status=\"notrun\" result=\"interrupted\" classname=\"moe-harness\">\n"
                     "      <error message=\"{}\" type=\"\">{}</error>\n    </testcase>\n  </testsuite>\n",
                     xml_escape(not_judged), cdata(not_judged));
  return s + "</testsuites>\n";
}

}  // namespace moe
