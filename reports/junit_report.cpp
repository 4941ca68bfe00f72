#include "reports/junit_report.hpp"

#include <fmt/format.h>
#include <map>
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
  for (const CaseRecord& c : r.cases) {
    if (!by_kernel.count(c.kernel)) order.push_back(c.kernel);
    by_kernel[c.kernel].push_back(&c);
  }
  auto counts = [](const std::vector<const CaseRecord*>& cs) {
    int fail = 0, skip = 0;
    for (const CaseRecord* c : cs) {
      fail += c->status == "fail" || c->status == "error";
      skip += c->status == "skip";
    }
    return std::pair{fail, skip};
  };
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const auto [all_fail, all_skip] = counts([&] {
    std::vector<const CaseRecord*> v;
    for (const CaseRecord& c : r.cases) v.push_back(&c);
    return v;
  }());
  s += fmt::format("<testsuites tests=\"{}\" failures=\"{}\" skipped=\"{}\" disabled=\"0\" errors=\"0\" "
                   "timestamp=\"{}\" name=\"AllTests\">\n",
                   r.cases.size(), all_fail, all_skip, xml_escape(r.provenance.start_time));
  for (const std::string& k : order) {
    const auto& cs = by_kernel[k];
    const auto [fail, skip] = counts(cs);
    s += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" disabled=\"0\" errors=\"0\">\n",
                     xml_escape(gtest_test_name(k)), cs.size(), fail, skip);
    for (const CaseRecord* c : cs) {
      const auto colon = c->source.rfind(':');
      s += fmt::format("    <testcase name=\"{}\" file=\"{}\" line=\"{}\" status=\"run\" result=\"{}\" classname=\"{}\">\n",
                       xml_escape(gtest_test_name(c->id)),
                       xml_escape(colon == std::string::npos ? c->source : c->source.substr(0, colon)),
                       colon == std::string::npos ? "0" : c->source.substr(colon + 1),
                       c->status == "skip" ? "skipped" : "completed", xml_escape(gtest_test_name(k)));
      s += "      <properties>\n";
      for (const auto& [name, v] : c->metrics)
        s += fmt::format("        <property name=\"{}\" value=\"{:.9g}\"/>\n", xml_escape(name), v);
      s += fmt::format("        <property name=\"variant\" value=\"{}\"/>\n", xml_escape(c->variant));
      s += fmt::format("        <property name=\"verdict\" value=\"{}\"/>\n", xml_escape(c->status));
      s += "      </properties>\n";
      if (c->status == "skip")
        s += fmt::format("      <skipped message=\"{}\">{}</skipped>\n", xml_escape(c->reason), cdata(c->reason));
      else if (c->status == "fail")
        s += fmt::format("      <failure message=\"{}\" type=\"\">{}</failure>\n", xml_escape("FAIL " + c->reason),
                         cdata("FAIL " + c->reason + "\n" + c->details));
      else if (c->status == "error")
        s += fmt::format("      <failure message=\"{}\" type=\"\">{}</failure>\n",
                         xml_escape("HARNESS ERROR (not a kernel verdict): " + c->reason),
                         cdata("HARNESS ERROR (not a kernel verdict): " + c->reason + "\n" + c->details));
      s += "    </testcase>\n";
    }
    s += "  </testsuite>\n";
  }
  return s + "</testsuites>\n";
}

}  // namespace moe
