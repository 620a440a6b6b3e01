package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
)

// config is the process configuration, from flags with SKEWSCOPE_* env
// fallbacks. A flag given on the command line wins over the environment.
type config struct {
	Listen         string
	LogFormat      string
	LogLevel       slog.Level
	ExternalURL    *url.URL // nil when not set
	RoutePrefix    string
	FrameAncestors []string
}

// envVars maps each flag to its environment variable. The README's
// configuration table lists the same pairs.
var envVars = map[string]string{
	"listen":     "SKEWSCOPE_LISTEN",
	"log.format": "SKEWSCOPE_LOG_FORMAT",
	"log.level":  "SKEWSCOPE_LOG_LEVEL",

	"web.external-url":    "SKEWSCOPE_WEB_EXTERNAL_URL",
	"web.route-prefix":    "SKEWSCOPE_WEB_ROUTE_PREFIX",
	"web.frame-ancestors": "SKEWSCOPE_WEB_FRAME_ANCESTORS",
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	var level, externalURL, routePrefix, frameAncestors string
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:8080", "address to serve HTTP on (env SKEWSCOPE_LISTEN)")
	fs.StringVar(&cfg.LogFormat, "log.format", "text", "log format: text or json (env SKEWSCOPE_LOG_FORMAT)")
	fs.StringVar(&level, "log.level", "info", "log level: debug, info, warn or error (env SKEWSCOPE_LOG_LEVEL)")
	fs.StringVar(&externalURL, "web.external-url", "", "URL under which skewscope is reachable, e.g. behind a reverse proxy; its path becomes the route prefix (env SKEWSCOPE_WEB_EXTERNAL_URL)")
	fs.StringVar(&routePrefix, "web.route-prefix", "", "path prefix of every route; defaults to the path of --web.external-url (env SKEWSCOPE_WEB_ROUTE_PREFIX)")
	fs.StringVar(&frameAncestors, "web.frame-ancestors", "", "comma-separated origins allowed to embed pages in a frame; default 'self' (env SKEWSCOPE_WEB_FRAME_ANCESTORS)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, env := range envVars {
		if given[name] {
			continue
		}
		if v := getenv(env); v != "" {
			if err := fs.Set(name, v); err != nil {
				return config{}, fmt.Errorf("%s=%q: %v", env, v, err)
			}
		}
	}
	// Re-read the values that env may have set through fs.Set.
	level = fs.Lookup("log.level").Value.String()
	externalURL = fs.Lookup("web.external-url").Value.String()
	routePrefix = fs.Lookup("web.route-prefix").Value.String()
	frameAncestors = fs.Lookup("web.frame-ancestors").Value.String()
	switch cfg.LogFormat {
	case "text", "json":
	default:
		return config{}, fmt.Errorf("--log.format=%q: want text or json", cfg.LogFormat)
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return config{}, fmt.Errorf("--log.level=%q: want debug, info, warn or error", level)
	}
	if externalURL != "" {
		u, err := url.Parse(externalURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return config{}, fmt.Errorf("--web.external-url=%q: want an absolute http or https URL, e.g. https://tools.example.com/skewscope", externalURL)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		cfg.ExternalURL = u
		cfg.RoutePrefix = u.Path
	}
	if routePrefix != "" {
		cfg.RoutePrefix = "/" + strings.Trim(routePrefix, "/")
		if cfg.RoutePrefix == "/" {
			cfg.RoutePrefix = ""
		}
	}
	for _, a := range strings.Split(frameAncestors, ",") {
		if a = strings.TrimSpace(a); a != "" {
			cfg.FrameAncestors = append(cfg.FrameAncestors, a)
		}
	}
	if strings.TrimSpace(cfg.Listen) == "" {
		return config{}, errors.New("--listen is empty: give host:port, e.g. 127.0.0.1:8080")
	}
	return cfg, nil
}

func newLogger(cfg config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
