package campaigns

// View is what of a campaign a character's player may see: the files
// every player reads, and its own sheet and journal. The game master's
// story-state.md, the notes on npcs, locations, factions, items and
// beats, the other characters' sheets and journals, and tmp/ are not in
// it.
type View struct {
	Read  []string // paths the player may read
	Write []string // paths the player may also write
}

// View returns the view of character's player.
func (c *Campaign) View(character string) View {
	return View{
		Read: []string{
			c.Path(Overview), c.Path(WorldPrimer), c.Path(PartyKnowledge), c.Path(Preferences),
			c.Path(ScenesDir), c.SheetPath(character),
		},
		Write: []string{c.JournalPath(character)},
	}
}
