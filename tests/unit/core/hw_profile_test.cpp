#include "hw/hw_profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "util/diagnostics.h"

using namespace lathe;
using lathe::hw::HwProfile;

namespace {

const std::filesystem::path kResources = std::filesystem::path(LATHE_SOURCE_DIR) / "resources/hw";
const std::vector<std::string> kNumberFields = {
    "sm_count",     "flops_bf16",    "flops_fp16",    "flops_fp32",      "hbm_bandwidth",
    "hbm_capacity", "h2d_bandwidth", "d2h_bandwidth", "launch_overhead",
};

nlohmann::json validDocument() {
  return hw::hwProfileToJson(hw::resolveHwProfile("h200"));
}

// The message of the BadInput error parsing `doc` raises; fails the test when it raises none.
std::string badInputMessage(const std::string& text) {
  try {
    static_cast<void>(hw::parseHwProfile(text, "mine.json"));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

TEST(HwProfile, BuiltInsAreTheFiveShippedProfiles) {
  const auto ids = hw::builtInHwIds();
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()),
            (std::set<std::string>{"h200", "h100", "rtx5090", "a100", "l40s"}));
  EXPECT_EQ(ids.size(), 5u);
}

TEST(HwProfile, EveryBuiltInHasSourcesPlausibleUnitsAndRoundTrips) {
  for (const auto& id : hw::builtInHwIds()) {
    SCOPED_TRACE(id);
    const HwProfile p = hw::resolveHwProfile(id);
    EXPECT_EQ(p.id, id);
    EXPECT_FALSE(p.name.empty());
    EXPECT_TRUE(p.arch.starts_with("sm_")) << p.arch;
    for (const auto& field : kNumberFields) {
      ASSERT_TRUE(p.sources.contains(field)) << field;
      EXPECT_FALSE(p.sources.at(field).empty()) << field;
    }
    // Units: a slip between TB/s and GB/s or sparse and dense lands outside these ranges.
    EXPECT_GT(p.smCount, 50);
    EXPECT_LT(p.smCount, 500);
    for (double flops : {p.flopsBf16, p.flopsFp16, p.flopsFp32}) {
      EXPECT_GT(flops, 1e12);
      EXPECT_LT(flops, 5e15);
    }
    EXPECT_GE(p.flopsBf16, p.flopsFp32);
    if (p.flopsFp8 > 0) {
      EXPECT_GE(p.flopsFp8, p.flopsBf16);
    }
    EXPECT_GT(p.hbmBandwidth, 1e11);
    EXPECT_LT(p.hbmBandwidth, 2e13);
    const double ridge = p.flopsBf16 / p.hbmBandwidth;  // FLOP per byte
    EXPECT_GT(ridge, 20);
    EXPECT_LT(ridge, 1000);
    EXPECT_GE(p.hbmCapacity, uint64_t{16} << 30);
    EXPECT_LE(p.hbmCapacity, uint64_t{1} << 40);
    for (double link : {p.h2dBandwidth, p.d2hBandwidth}) {
      EXPECT_GT(link, 5e9);
      EXPECT_LT(link, 1e12);
    }
    EXPECT_GT(p.launchOverhead, 0);
    EXPECT_LT(p.launchOverhead, 1e-4);
    // Optional: the host's time per kernel of a compiled step, tens of microseconds where measured.
    EXPECT_GE(p.hostSecondsPerKernel, 0);
    EXPECT_LT(p.hostSecondsPerKernel, 1e-3);
    if (p.hostSecondsPerKernel > 0) {
      EXPECT_GT(p.hostSecondsPerKernel, p.launchOverhead);
    }

    const nlohmann::json doc = hw::hwProfileToJson(p);
    EXPECT_EQ(doc["format"], "lathe.hw/1");
    EXPECT_EQ(hw::parseHwProfile(doc.dump(), "round trip"), p);
  }
}

TEST(HwProfile, EmbeddedProfilesMatchTheResourceFiles) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kResources)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const std::string stem = entry.path().stem().string();
    EXPECT_EQ(hw::loadHwProfile(entry.path()), hw::resolveHwProfile(stem))
        << stem << ": the build embeds a stale copy; re-run the build";
  }
  EXPECT_EQ(files, hw::builtInHwIds().size());
}

TEST(HwProfile, ResolvesIdsFileStemsAndPaths) {
  EXPECT_EQ(hw::resolveHwProfile("h100_sxm").id, "h100");
  EXPECT_EQ(hw::resolveHwProfile("a100_80gb").id, "a100");
  EXPECT_EQ(hw::resolveHwProfile("H200").id, "h200");
  EXPECT_EQ(hw::resolveHwProfile("h100"), hw::resolveHwProfile("h100_sxm"));

  nlohmann::json doc = validDocument();
  doc["id"] = "my_gpu";
  doc["hbm_bandwidth"]["value"] = 1.5e12;
  const auto path = std::filesystem::path(::testing::TempDir()) / "lathe_hw_profile_test.json";
  std::ofstream(path) << doc.dump(2);
  const HwProfile mine = hw::resolveHwProfile(path.string());
  EXPECT_EQ(mine.id, "my_gpu");
  EXPECT_EQ(mine.hbmBandwidth, 1.5e12);
  EXPECT_EQ(mine.flopsBf16, hw::resolveHwProfile("h200").flopsBf16);
  std::filesystem::remove(path);

  try {
    static_cast<void>(hw::resolveHwProfile("b200"));
    ADD_FAILURE() << "resolved an unknown id";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    EXPECT_NE(std::string(e.what()).find("h200"), std::string::npos) << e.what();  // lists what exists
  }
}

TEST(HwProfile, FlopsForPicksTheRateOfTheDtype) {
  const HwProfile h200 = hw::resolveHwProfile("h200");
  EXPECT_EQ(h200.flopsFor(ir::DType::BF16), h200.flopsBf16);
  EXPECT_EQ(h200.flopsFor(ir::DType::F16), h200.flopsFp16);
  EXPECT_EQ(h200.flopsFor(ir::DType::F32), h200.flopsFp32);
  EXPECT_EQ(h200.flopsFor(ir::DType::F64), h200.flopsFp32);
  EXPECT_EQ(h200.flopsFor(ir::DType::I64), h200.flopsFp32);
  EXPECT_EQ(h200.flopsFor(ir::DType::Unknown), h200.flopsFp32);
  ASSERT_GT(h200.flopsFp8, 0);
  EXPECT_EQ(h200.flopsFor(ir::DType::F8E4M3FN), h200.flopsFp8);
  EXPECT_EQ(h200.flopsFor(ir::DType::F8E5M2), h200.flopsFp8);
  // The A100 has no fp8 matrix units: fp8 operands run at the bf16 rate.
  const HwProfile a100 = hw::resolveHwProfile("a100");
  EXPECT_EQ(a100.flopsFp8, 0);
  EXPECT_EQ(a100.flopsFor(ir::DType::F8E4M3FN), a100.flopsBf16);
}

TEST(HwProfile, EfficiencyDefaultsToOneAndReadsCategoryNames) {
  nlohmann::json doc = validDocument();
  doc.erase("efficiency");
  const HwProfile plain = hw::parseHwProfile(doc.dump(), "plain");
  for (size_t i = 0; i < ir::kOpCategoryCount; ++i) EXPECT_EQ(plain.efficiency[i], 1.0);
  EXPECT_FALSE(plain.sources.contains("efficiency"));

  doc["efficiency"] = {{"source", "guess"}, {"matmul", 0.7}, {"data_movement", 0.5}};
  const HwProfile tuned = hw::parseHwProfile(doc.dump(), "tuned");
  EXPECT_EQ(tuned.efficiencyOf(ir::OpCategory::Matmul), 0.7);
  EXPECT_EQ(tuned.efficiencyOf(ir::OpCategory::DataMovement), 0.5);
  EXPECT_EQ(tuned.efficiencyOf(ir::OpCategory::Pointwise), 1.0);
  EXPECT_EQ(tuned.sources.at("efficiency"), "guess");
  EXPECT_EQ(hw::parseHwProfile(hw::hwProfileToJson(tuned).dump(), "again"), tuned);
}

TEST(HwProfile, BadProfilesAreBadInputNamingTheField) {
  struct Case {
    const char* what;
    std::function<void(nlohmann::json&)> mutate;
    const char* mentions;
  };
  const std::vector<Case> cases = {
      {"wrong format", [](auto& d) { d["format"] = "lathe.hw/2"; }, "lathe.hw/2"},
      {"missing field", [](auto& d) { d.erase("flops_bf16"); }, "flops_bf16"},
      {"missing id", [](auto& d) { d.erase("id"); }, "'id'"},
      {"negative", [](auto& d) { d["hbm_bandwidth"]["value"] = -1; }, "hbm_bandwidth"},
      {"zero rate", [](auto& d) { d["flops_fp32"]["value"] = 0; }, "flops_fp32"},
      {"not a number", [](auto& d) { d["h2d_bandwidth"]["value"] = "55 GB/s"; }, "h2d_bandwidth"},
      {"bare number", [](auto& d) { d["d2h_bandwidth"] = 55e9; }, "d2h_bandwidth"},
      {"no source", [](auto& d) { d["hbm_capacity"].erase("source"); }, "hbm_capacity"},
      {"empty source", [](auto& d) { d["launch_overhead"]["source"] = ""; }, "launch_overhead"},
      {"a link without its latency", [](auto& d) { d.erase("peer_latency"); }, "peer_latency"},
      {"a zero link", [](auto& d) { d["peer_bandwidth"]["value"] = 0; }, "peer_bandwidth"},
      {"fractional SMs", [](auto& d) { d["sm_count"]["value"] = 131.5; }, "sm_count"},
      {"unknown field", [](auto& d) { d["hbm_bandwith"] = d["hbm_bandwidth"]; }, "hbm_bandwith"},
      {"unknown category", [](auto& d) { d["efficiency"]["gemm"] = 0.8; }, "gemm"},
      {"percent, not fraction", [](auto& d) { d["efficiency"]["matmul"] = 80; }, "matmul"},
      {"efficiency without source", [](auto& d) { d["efficiency"].erase("source"); }, "efficiency"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json doc = validDocument();
    c.mutate(doc);
    const std::string message = badInputMessage(doc.dump());
    EXPECT_NE(message.find(c.mentions), std::string::npos) << message;
    EXPECT_NE(message.find("mine.json"), std::string::npos) << message;
  }
  for (const char* text : {"", "{", "[1, 2]", "\"h200\"", "{\"format\": \"lathe.hw/1\"}"}) {
    SCOPED_TRACE(text);
    static_cast<void>(badInputMessage(text));
  }
  // Zero launch overhead is a valid claim (an idealized device), not an error.
  nlohmann::json doc = validDocument();
  doc["launch_overhead"]["value"] = 0;
  EXPECT_EQ(hw::parseHwProfile(doc.dump(), "ideal").launchOverhead, 0);
  // The host's time per kernel is optional (0: never the bound).
  doc.erase("host_seconds_per_kernel");
  EXPECT_EQ(hw::parseHwProfile(doc.dump(), "ideal").hostSecondsPerKernel, 0);
  doc["host_seconds_per_kernel"] = {{"value", 2e-5}, {"source", "fit"}};
  EXPECT_EQ(hw::parseHwProfile(doc.dump(), "host").hostSecondsPerKernel, 2e-5);
  EXPECT_EQ(hw::resolveHwProfile("h200").hostSecondsPerKernel, 24.5e-6);
}

}  // namespace
