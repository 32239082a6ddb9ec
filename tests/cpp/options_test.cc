// Engine options: declared once (EngineOptionTable), unknown keys and bad values refused with the
// key and what it takes, environment variables turned into options in one place.
#include <gtest/gtest.h>

#include <cstdlib>

#include "ge/base/options.h"
#include "scoped_env.h"

namespace ge {
namespace {

TEST(OptionsTest, EveryDeclaredOptionHasADefaultOfItsType) {
  for (const OptionDef& def : EngineOptionTable()) {
    if (std::string(def.default_value).empty()) continue;  // derived by the engine
    Status st = ValidateOptions({{def.key, def.default_value}});
    EXPECT_TRUE(st.ok()) << def.key << ": " << st.message();
  }
}

TEST(OptionsTest, UnknownKeysAndBadValuesNameWhatIsAllowed) {
  Status st = ValidateOptions({{"ge.oo.levl", "O1"}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown engine option 'ge.oo.levl'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("ge.oo.level"), std::string::npos) << st.message();
  st = ValidateOptions({{option::kOoLevel, "O2"}});
  EXPECT_NE(st.message().find("allowed: O1, O3"), std::string::npos) << st.message();
  st = ValidateOptions({{option::kAutofuse, "banana"}});
  EXPECT_NE(st.message().find("must be true or false"), std::string::npos) << st.message();
  st = ValidateOptions({{option::kKernelCompileTimeout, "-5"}});
  EXPECT_NE(st.message().find("positive integer"), std::string::npos) << st.message();
  EXPECT_TRUE(ValidateOptions({{option::kTopoSortingMode, "RDFS"}, {option::kKernelCacheMaxEntries, "7"}}).ok());
}

TEST(OptionsTest, EnvironmentVariablesBecomeOptionsTheCallerDidNotSet) {
  ScopedEnv cache("TORCHAIR_GE_CACHE_DIR", "/tmp/from_env");
  ScopedEnv timeout("TORCHAIR_GE_KERNEL_COMPILE_TIMEOUT", "12");
  auto options = WithEnvironment({{option::kKernelCacheDir, "/tmp/mine"}});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_EQ((*options)[option::kKernelCacheDir], "/tmp/mine");  // the caller wins
  EXPECT_EQ((*options)[option::kKernelCompileTimeout], "12");
  ScopedEnv bad("TORCHAIR_GE_CACHE_MAX_ENTRIES", "many");
  options = WithEnvironment({});
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("$TORCHAIR_GE_CACHE_MAX_ENTRIES"), std::string::npos)
      << options.status().message();
}

TEST(OptionsTest, AutofuseFlagsIsGesSwitch) {
  {
    ScopedEnv flags("AUTOFUSE_FLAGS", "--enable_autofuse=false --other_flag=1");
    auto options = WithEnvironment({{option::kAutofuse, "true"}});  // the switch wins over an option
    ASSERT_TRUE(options.ok());
    EXPECT_EQ((*options)[option::kAutofuse], "false");
  }
  {
    ScopedEnv flags("AUTOFUSE_FLAGS", "--enable_autofuse=banana");
    auto options = WithEnvironment({});
    ASSERT_FALSE(options.ok());
    EXPECT_NE(options.status().message().find("--enable_autofuse takes true or false, got 'banana'"), std::string::npos)
        << options.status().message();
  }
}

}  // namespace
}  // namespace ge
