package conformance

import (
	"fmt"
	"net/url"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// The requests of the three operations. They are values: equal requests
// share one response (client.Cached).

func healthRequest() client.Request {
	return client.PostJSON(schemas.PathHealth, "{}", "")
}

func feedRequest(q url.Values, key string) client.Request {
	return client.Get(schemas.PathFeed, q, client.Bearer(key))
}

func limitRequest(limit string, key string) client.Request {
	return feedRequest(url.Values{"limit": {limit}}, key)
}

// pageRequest asks for one page of a walk ("" leaves limit or cursor out).
func pageRequest(limit, cursor, key string) client.Request {
	q := url.Values{}
	if limit != "" {
		q.Set("limit", limit)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	return feedRequest(q, key)
}

func videosRequest(ids []string, key string) client.Request {
	body := jsondoc.Encode(jsondoc.NewObj("videoIds", ids))
	return videosBody(string(body), key)
}

// videosBody sends a body as is, valid or not.
func videosBody(body, key string) client.Request {
	return client.PostJSON(schemas.PathVideos, body, client.Bearer(key))
}

// inventedID is a video id that cannot exist: '~' is in no platform's id
// alphabet. n tells ids apart; the result has exactly length characters.
func inventedID(n, length int) string {
	s := fmt.Sprintf("~no~such~video~%d~", n)
	for len(s) < length {
		s += "x"
	}
	return s[:length]
}

// oneInventedID is the body of a tracked-videos request that is valid in
// all but what a spec varies (the key, say).
func oneInventedID() string { return `{"videoIds":["` + inventedID(0, 24) + `"]}` }
