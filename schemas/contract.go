package schemas

import "time"

// The numbers of the contract, named once. schemas_test.go proves that the
// schema files say the same.
const (
	// DefaultPageSize is the feed's page size when limit is omitted.
	DefaultPageSize = 50
	// MaxPageSize caps limit on the feed; larger values are capped.
	MaxPageSize = 200
	// MinVideoIDs and MaxVideoIDs bound videoIds of the tracked-videos request.
	MinVideoIDs = 1
	MaxVideoIDs = 20
	// MinVideoIDLen and MaxVideoIDLen bound one video id, in characters.
	MinVideoIDLen = 1
	MaxVideoIDLen = 32
	// FeedRequestsPerMinute is the feed's rate limit per API key.
	FeedRequestsPerMinute = 20
	// RateWindow is the window the rate limit is counted over.
	RateWindow = time.Minute
	// PollInterval is how often fresh videos are polled, at the most.
	PollInterval = 15 * time.Minute
	// APIVersion is the version the tracked-videos operation's description carries.
	APIVersion = "1.0.0"
)

// The paths of the three operations. They carry no version segment.
const (
	PathFeed   = "/api/public-feed"
	PathVideos = "/api/public/videos"
	PathHealth = "/api/public/health"
)

// The event types, in the order of the spec.
const (
	TypeVideoPublished           = "video_published"
	TypeTitleChanged             = "title_changed"
	TypeThumbnailChanged         = "thumbnail_changed"
	TypeTitleABTest              = "title_ab_test"
	TypeTitleABTestConcluded     = "title_ab_test_concluded"
	TypeThumbnailABTest          = "thumbnail_ab_test"
	TypeThumbnailABTestConcluded = "thumbnail_ab_test_concluded"
	TypeMembersOnlyChanged       = "members_only_changed"
	TypeSubscriberChange         = "subscriber_change"
	TypeChannelRenamed           = "channel_renamed"
	TypeChannelAvatarChanged     = "channel_avatar_changed"
)

// EventTypes lists the 11 event types; no other type exists.
var EventTypes = []string{
	TypeVideoPublished, TypeTitleChanged, TypeThumbnailChanged,
	TypeTitleABTest, TypeTitleABTestConcluded, TypeThumbnailABTest,
	TypeThumbnailABTestConcluded, TypeMembersOnlyChanged,
	TypeSubscriberChange, TypeChannelRenamed, TypeChannelAvatarChanged,
}

// IsChannelLevel reports whether events of type t carry no video object.
func IsChannelLevel(t string) bool {
	return t == TypeSubscriberChange || t == TypeChannelRenamed || t == TypeChannelAvatarChanged
}
