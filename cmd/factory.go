package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

const defaultAPIURL = "http://127.0.0.1:8080"

// Factory builds what commands need, lazily: commands that make no API call
// never build a client, and only serve/migrate/admin ever open a database.
// It owns the one viper instance: flags > TOLLGATE_* env > config file >
// defaults.
type Factory struct {
	IO *IO
	v  *viper.Viper

	clientOnce sync.Once
	client     *client.Client
	clientErr  error

	// keyFrom says where the API key comes from, for a refused key's hint.
	keyFrom string
	// keyGiven is true when --api-key or TOLLGATE_API_KEY names the key;
	// needMode is the mode the running command works in only ("" for
	// both), from its modeAnnotation.
	keyGiven bool
	needMode string

	// noticeMu guards noticeUntil: the end of the wait the last retry
	// notice announced, so concurrent requests waiting out the same rate
	// limit print one line, not one each.
	noticeMu    sync.Mutex
	noticeUntil time.Time
	// noNotices silences them while the TUI owns the terminal.
	noNotices bool
}

// NewFactory returns a Factory over streams.
func NewFactory(streams *IO) *Factory {
	v := viper.New()
	v.SetEnvPrefix("TOLLGATE")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	return &Factory{IO: streams, v: v}
}

// key maps a flag name to its viper key: config files and env use
// underscores (api_url, TOLLGATE_API_URL).
func key(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// bindFlags binds every flag of the command being run and reads the config
// file. Called once, from the root's PersistentPreRunE.
func (f *Factory) bindFlags(cmd *cobra.Command) error {
	var bindErr error
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if err := f.v.BindPFlag(key(fl.Name), fl); err != nil && bindErr == nil {
			bindErr = err
		}
	})
	if bindErr != nil {
		return bindErr
	}
	named := f.v.GetString("config") // --config or TOLLGATE_CONFIG
	path := named
	if path == "" {
		path = ConfigPath()
	}
	switch {
	case cmd.Flags().Changed("api-key"):
		f.keyFrom, f.keyGiven = "--api-key", true
	case os.Getenv("TOLLGATE_API_KEY") != "":
		f.keyFrom, f.keyGiven = "TOLLGATE_API_KEY", true
	default:
		f.keyFrom = "the config file " + path
	}
	for c := cmd; c != nil; c = c.Parent() {
		if m := c.Annotations[modeAnnotation]; m != "" {
			f.needMode = m
			break
		}
	}
	f.v.SetConfigFile(path)
	f.v.SetConfigType("yaml")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		switch {
		case named == "":
			// The default file appears when `serve` saves the first key.
			return nil
		case cmd.Name() != "serve" || cmd.Parent() != cmd.Root():
			return usageError("config file %s does not exist (named by --config or TOLLGATE_CONFIG)", path)
		}
		// serve saves the first key to the file it is given, so a file
		// that does not exist yet is expected there; say so all the same.
		fmt.Fprintf(f.IO.Err, "tollgate: config file %s does not exist yet: serving without it (a first start saves its API key there)\n", path)
		return nil
	}
	if err := f.v.ReadInConfig(); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// ConfigPath is $XDG_CONFIG_HOME/tollgate/config.yaml.
func ConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "tollgate", "config.yaml")
}

// DataDir is $XDG_DATA_HOME/tollgate, the embedded default's home.
func DataDir() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "tollgate")
}

// JSON reports whether --json was given.
func (f *Factory) JSON() bool { return f.v.GetBool("json") }

// Client returns the API client configured by --api-url and --api-key.
func (f *Factory) Client() (*client.Client, error) {
	f.clientOnce.Do(func() {
		key, err := f.apiKey()
		if err != nil {
			f.clientErr = err
			return
		}
		url := f.v.GetString("api_url")
		if url == "" {
			url = defaultAPIURL
		}
		f.client = client.New(url, key, client.WithUserAgent("tollgate-cli/"+version), client.WithRetryNotify(f.retryNotice))
	})
	return f.client, f.clientErr
}

// modeAnnotation marks a command (and its subcommands) that works in one
// mode only: its value is "test" or "live".
const modeAnnotation = "tollgate.mode"

// Config file keys of the API keys: api_key is the one the first start
// saves (either mode); test_api_key and live_api_key hold one mode's each.
const (
	configTestKey = "test_api_key"
	configLiveKey = "live_api_key"
)

// apiKey picks the key a client command uses. A key named by --api-key or
// TOLLGATE_API_KEY is used as it is. Otherwise the config file's: for a
// command that needs live mode (--live) the live key (live_api_key, or
// api_key when that is a live key), for one that needs test mode (the test
// clock, trigger) the test key likewise, and for the rest api_key, else
// test_api_key, else live_api_key.
func (f *Factory) apiKey() (string, error) {
	if f.keyGiven {
		return f.v.GetString("api_key"), nil
	}
	mode := f.needMode
	if f.v.GetBool("live") {
		if mode == string(tenant.Test) {
			return "", usageError("this command works in test mode only: drop --live")
		}
		mode = string(tenant.Live)
	}
	base := f.keyFrom
	pick := func(name string) string {
		if k := f.v.GetString(name); k != "" {
			f.keyFrom = base + " (" + name + ")"
			return k
		}
		return ""
	}
	var key string
	switch mode {
	case string(tenant.Live), string(tenant.Test):
		key = pick(mode + "_api_key")
		if key == "" && strings.HasPrefix(f.v.GetString("api_key"), "sk_"+mode+"_") {
			key = pick("api_key")
		}
		if key == "" {
			return "", exitWith(ExitAuth, fmt.Errorf("no %s API key: create one with `tollgate admin key create --merchant ID --mode %s --save` (it is saved as %s_api_key), or pass --api-key",
				mode, mode, mode))
		}
	default:
		for _, name := range []string{"api_key", configTestKey, configLiveKey} {
			if key = pick(name); key != "" {
				break
			}
		}
		if key == "" {
			return "", exitWith(ExitAuth, errors.New("no API key: pass --api-key, set TOLLGATE_API_KEY, or run `tollgate serve` once to create one"))
		}
	}
	return key, nil
}

// retryNotice tells the person on stderr why a command is waiting: rate
// limited (429) or the daemon unavailable (503). Quick retries after a
// refused connection stay quiet; a lasting failure is reported at the end.
func (f *Factory) retryNotice(r client.Retry) {
	var apiErr *client.Error
	if !errors.As(r.Err, &apiErr) {
		return
	}
	why := "rate limited"
	if !r.RateLimited() {
		why = fmt.Sprintf("the API answered %d", apiErr.Status)
		if apiErr.Code != "" {
			why += " " + apiErr.Code
		}
	}
	now := time.Now()
	f.noticeMu.Lock()
	defer f.noticeMu.Unlock()
	if f.noNotices {
		return
	}
	if now.Add(r.Wait).Before(f.noticeUntil.Add(time.Second)) {
		return // another request already said it
	}
	f.noticeUntil = now.Add(r.Wait)
	clear := ""
	if f.IO.ErrIsTerminal {
		clear = "\r\x1b[K" // over a progress bar
	}
	fmt.Fprintf(f.IO.Err, "%stollgate: %s (%s %s); retrying in %s\n", clear, why, r.Method, r.Path, waitString(r.Wait))
}

// silenceRetryNotices stops retryNotice from writing: a full-screen UI
// would be drawn over.
func (f *Factory) silenceRetryNotices() {
	f.noticeMu.Lock()
	defer f.noticeMu.Unlock()
	f.noNotices = true
}

// waitString is a retry wait for people: whole seconds, rounded up, or
// milliseconds below one second.
func waitString(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%d s", int((d+time.Second-1)/time.Second))
}
