"""Writes the embedded SQuAD-format sample: invented encyclopedic paragraphs about a made-up
country (Ostrand) and a few general topics, with questions and answers written for it. No text
comes from SQuAD.

Run from the repository root: ``python reproduction/squad/sample/make_sample.py``. The output is
deterministic; the files are committed so tests and the demo need no generation step. The
schema is SQuAD v1.1's (``data`` / ``paragraphs`` / ``qas``). Train has one answer a question,
dev several (as the official dev set: variants with or without articles or punctuation). An
answer is its text, or ``(text, n)`` for the n-th occurrence (from 0) of a text that is in
the paragraph more than once; its ``answer_start`` is computed, and checked, here.
"""

from __future__ import annotations

import json
from pathlib import Path

Answer = str | tuple[str, int]
Question = tuple[str, list[Answer]]
Paragraph = tuple[str, list[Question]]

TRAIN: list[tuple[str, list[Paragraph]]] = [
    ("Velmar River", [
        ("The Velmar River is a 412-kilometre river in the northern uplands of the republic of "
         "Ostrand. It rises on the slopes of Mount Kerrig at an elevation of 1,870 metres and "
         "flows south-east through the Harrow Gap before reaching the Grey Sea at Dunhaven. "
         "Its largest tributary, the Sill, joins it near the market town of Amberley. The name "
         "Velmar is thought to come from an old word meaning \"slow water\".", [
             ("How long is the Velmar River?", ["412-kilometre"]),
             ("Where does the Velmar River rise?", ["on the slopes of Mount Kerrig"]),
             ("What is the largest tributary of the Velmar?", ["the Sill"]),
             ("What does the name Velmar probably mean?", ["slow water"]),
         ]),
        ("Flooding on the Velmar has been recorded since 1604. The worst flood, in March 1889, "
         "drowned 37 people and destroyed the old stone bridge at Amberley. After a second flood "
         "in 1921, engineers built the Harrow Dam (completed 1934), which holds back a reservoir "
         "of 2.3 cubic kilometres. Since then the river has flooded only twice: in 1958 and in "
         "2007.", [
             ("In what year did the worst flood happen?", ["1889"]),
             ("How many people died in the flood of 1889?", ["37"]),
             ("When was the Harrow Dam completed?", ["1934"]),
             ("How large is the reservoir behind the Harrow Dam?", ["2.3 cubic kilometres"]),
         ]),
        ("The river's lower course is home to the Velmar trout, a well-known subspecies found "
         "nowhere else. Anglers need a licence between April and September; outside those "
         "months fishing is forbidden. Trout numbers fell by about half in the 1970s, when "
         "paper mills at Amberley released waste into the water, but they have recovered since "
         "the mills closed in 1986. Today the trout is protected, and the mills' old buildings "
         "house a museum.", [
             ("What subspecies lives only in the lower Velmar?", ["the Velmar trout"]),
             ("When do anglers need a licence?", ["between April and September"]),
             ("Why did trout numbers fall in the 1970s?",
              ["paper mills at Amberley released waste into the water"]),
             ("When did the paper mills close?", ["1986"]),
         ]),
    ]),
    ("Dunhaven", [
        ("Dunhaven is a port town on the Grey Sea, at the mouth of the Velmar River. With a "
         "population of 48,200 (2011 census), it is the third-largest town in Ostrand. The "
         "harbour was founded by fishermen in the 12th century and grew rich from the salt "
         "trade. Dunhaven's harbour wall, built in 1712, is 1.4 km long and still protects the "
         "inner basin from winter storms.", [
             ("What is the population of Dunhaven?", ["48,200"]),
             ("When was Dunhaven's harbour founded?", ["in the 12th century"]),
             ("What trade made the harbour rich?", ["the salt trade"]),
             ("How long is the harbour wall?", ["1.4 km"]),
         ]),
        ("The town is governed by a council of 21 members, elected every four years. Its coat "
         "of arms shows a silver herring on a blue field, a reminder of the fishing fleet that "
         "once numbered more than 300 boats. The fleet is much smaller today: in 2019 only 42 "
         "boats were registered in Dunhaven, and most of them fish for crab rather than "
         "herring.", [
             ("How many members does the town council have?", ["21"]),
             ("What does Dunhaven's coat of arms show?", ["a silver herring on a blue field"]),
             ("How many boats were registered in Dunhaven in 2019?", ["42"]),
             ("What do most of Dunhaven's boats fish for today?", ["crab"]),
         ]),
        ("Every August the town holds the Herring Days, a three-day fair with boat races, music "
         "and a market. The fair began in 1951 as a small celebration for the reopening of the "
         "fish market, which had been damaged during the war. Visitors eat smoked herring on "
         "rye bread, and the winner of the rowing race receives the Silver Oar. In recent years "
         "the fair has drawn up to 60,000 visitors.", [
             ("In which month are the Herring Days held?", ["August"]),
             ("How many days does the Herring Days fair last?", ["three"]),
             ("What does the winner of the rowing race receive?", ["the Silver Oar"]),
             ("How many visitors has the fair drawn in recent years?", ["up to 60,000"]),
         ]),
    ]),
    ("Orla Quist", [
        ("Orla Quist (1838–1907) was an Ostrandic engineer and inventor, best known for the "
         "Quist lamp, a paraffin lamp that could not be knocked over. Born in Amberley, she "
         "trained as a clockmaker under her father before moving to Dunhaven in 1861. Her first "
         "patent, granted in 1866, covered a spring-driven fan for ships' cabins.", [
             ("When was Orla Quist born?", ["1838"]),
             ("What is Orla Quist best known for?", ["the Quist lamp"]),
             ("What did Quist train as?", ["a clockmaker"]),
             ("What did her first patent cover?", ["a spring-driven fan for ships' cabins"]),
         ]),
        ("The Quist lamp went on sale in 1874. Its heavy base, filled with sand, kept the flame "
         "upright even on a rolling deck, and the lamp was soon used by navies across the "
         "northern seas. By 1890 her workshop employed 140 people and made about 9,000 lamps a "
         "year. Quist refused to sell the company, and after her death it passed to her "
         "nephew, Anders Quist.", [
             ("When did the Quist lamp go on sale?", ["1874"]),
             ("What kept the lamp's flame upright?", ["Its heavy base, filled with sand"]),
             ("How many people did her workshop employ by 1890?", ["140"]),
             ("Who received the company after Quist's death?", ["her nephew, Anders Quist"]),
         ]),
        ("Quist was also a campaigner for technical schooling for girls. In 1882 she opened the "
         "Amberley Workshop School, which taught metalwork, drawing and arithmetic to about "
         "sixty pupils at a time. The school still exists as the Quist Technical College. A "
         "statue of Quist, holding a lamp, stands outside the college; it was unveiled on "
         "4 May 1938, the centenary of her birth.", [
             ("What did Quist campaign for?", ["technical schooling for girls"]),
             ("What school did she open in 1882?", ["the Amberley Workshop School"]),
             ("What is the school called today?", ["the Quist Technical College"]),
             ("When was the statue of Quist unveiled?", ["4 May 1938"]),
         ]),
    ]),
    ("Kessel beetle", [
        ("The Kessel beetle (Ostrandia kesseli) is a small ground beetle of the northern heaths. "
         "Adults are 6–9 mm long, with a bronze-green shell that looks almost black in shade. "
         "The species was first described in 1902 by the naturalist Hedda Kessel, who found it "
         "under stones near Mount Kerrig.", [
             ("How long are adult Kessel beetles?", ["6–9 mm"]),
             ("What colour is the beetle's shell?", ["bronze-green"]),
             ("Who first described the species?", ["the naturalist Hedda Kessel"]),
             ("Where did Kessel find the beetle?", ["under stones near Mount Kerrig"]),
         ]),
        ("Kessel beetles hunt at night. They feed mainly on springtails and mites, but will also "
         "eat the eggs of other insects. In winter the adults shelter in moss and become "
         "inactive when the temperature falls below 4 °C. A female lays 20–30 eggs in early "
         "summer, and the larvae take about two years to become adults.", [
             ("When do Kessel beetles hunt?", ["at night"]),
             ("What do the beetles mainly feed on?", ["springtails and mites"]),
             ("Below what temperature do adults become inactive?", ["4 °C"]),
             ("How many eggs does a female lay?", ["20–30"]),
         ]),
        ("Because heathland has been turned into farmland, the beetle is now rare. A survey in "
         "2015 found it at only eleven sites, compared with more than forty in the 1950s. It is "
         "listed as \"vulnerable\" in Ostrand's red list. Conservation groups have started "
         "grazing heaths with sheep, which keeps the ground open and warm – conditions the "
         "beetle needs.", [
             ("Why is the beetle now rare?", ["heathland has been turned into farmland"]),
             ("At how many sites was the beetle found in 2015?", ["eleven"]),
             ("How is the beetle listed in Ostrand's red list?", ["vulnerable"]),
             ("What animals are used to graze the heaths?", ["sheep"]),
         ]),
    ]),
    ("Lantern Festival of Marrow", [
        ("The Lantern Festival of Marrow is held on the first new moon after the autumn equinox "
         "in the hill village of Marrow. Villagers carry paper lanterns up to the ruined chapel "
         "of St. Ilse, where a bonfire is lit at midnight. The festival is first mentioned in a "
         "parish record of 1563, although local tradition claims it is much older.", [
             ("When is the Lantern Festival held?",
              ["on the first new moon after the autumn equinox"]),
             ("Where do villagers carry their lanterns?", ["the ruined chapel of St. Ilse"]),
             ("When is the bonfire lit?", ["at midnight"]),
             ("In what year is the festival first mentioned?", ["1563"]),
         ]),
        ("Each lantern is made from a willow frame covered with oiled paper. Children paint them "
         "with animals, stars or the names of relatives who have died during the year. The "
         "largest lantern, called the Mother, is about 2 m tall and is carried by four men on "
         "poles. After the festival the Mother is burned; the smaller lanterns are kept and "
         "hung in windows until spring.", [
             ("What is each lantern's frame made from?", ["willow"]),
             ("What is the largest lantern called?", ["the Mother"]),
             ("How tall is the largest lantern?", ["about 2 m"]),
             ("What happens to the largest lantern after the festival?",
              [("the Mother is burned", 0)]),
         ]),
        ("In 1978 the festival was almost abandoned, when only nine people took part. A revival "
         "led by the schoolteacher Piet Harnis brought it back; by 1990 several hundred people "
         "were coming from Dunhaven and Amberley. Since 2004 a bus runs from Dunhaven on "
         "festival night, and the village sells lantern kits to visitors for €12.", [
             ("How many people took part in 1978?", ["only nine"]),
             ("Who led the revival of the festival?", ["the schoolteacher Piet Harnis"]),
             ("Where does the festival-night bus start?", [("Dunhaven", 1)]),
             ("How much does a lantern kit cost?", ["€12"]),
         ]),
    ]),
    ("Aster Observatory", [
        ("The Aster Observatory stands on a ridge above Amberley at 1,120 m. It was founded in "
         "1896 by the astronomer Lev Sorensen with money from a lottery. Its main instrument, a "
         "60 cm refracting telescope, was the largest in Ostrand until 1961. The dome, painted "
         "white, can be seen from the Velmar valley on clear days.", [
             ("At what height does the observatory stand?", ["1,120 m"]),
             ("Who founded the Aster Observatory?", ["the astronomer Lev Sorensen"]),
             ("Where did the money to found it come from?", ["a lottery"]),
             ("How large is the main telescope?", ["60 cm"]),
         ]),
        ("Sorensen used the telescope to measure the positions of about 3,400 stars, published "
         "in the Aster Catalogue (1911). He also discovered the comet now called Sorensen's "
         "Comet, which returns every 7.6 years. After his death in 1924 the observatory was "
         "taken over by the University of Dunhaven.", [
             ("How many stars did Sorensen measure?", ["about 3,400"]),
             ("Where were the star positions published?", ["the Aster Catalogue"]),
             ("How often does Sorensen's Comet return?", ["every 7.6 years"]),
             ("Who took over the observatory in 1924?", ["the University of Dunhaven"]),
         ]),
        ("Light from the growing town made serious research difficult after the 1970s. The "
         "university moved its work to a new site in the southern mountains in 1983, and the "
         "Aster Observatory became a public museum. It offers star-gazing evenings on Fridays "
         "from October to March; the old telescope is still used on those nights.", [
             ("Why did serious research become difficult?", ["Light from the growing town"]),
             ("When did the university move its work?", ["1983"]),
             ("What did the Aster Observatory become?", ["a public museum"]),
             ("When are the star-gazing evenings held?", ["on Fridays from October to March"]),
         ]),
    ]),
    ("Brennic language", [
        ("Brennic is a language spoken by about 85,000 people in the western valleys of "
         "Ostrand. It belongs to the same family as the languages of the Grey Sea coast but has "
         "borrowed many words from its neighbours. Brennic has been written in the Latin "
         "alphabet since the 17th century; its spelling uses the letters ð and þ, which are "
         "rare elsewhere.", [
             ("How many people speak Brennic?", ["about 85,000"]),
             ("Where is Brennic spoken?", ["in the western valleys of Ostrand"]),
             ("Since when has Brennic been written in the Latin alphabet?",
              ["since the 17th century"]),
             ("Which unusual letters does Brennic spelling use?", ["ð and þ"]),
         ]),
        ("A striking feature of Brennic is its counting system, which is based on twenty: the "
         "word for 40 means \"two twenties\". Nouns have three genders, and verbs change their "
         "ending for seven persons, including a form used only when speaking to elders. The "
         "language has no word for \"please\"; politeness is shown through that special verb "
         "form instead.", [
             ("On what number is the Brennic counting system based?", ["twenty"]),
             ("What does the Brennic word for 40 mean?", ["two twenties"]),
             ("How many genders do Brennic nouns have?", ["three"]),
             ("How is politeness shown in Brennic?", ["through that special verb form"]),
         ]),
        ("Schools in the western valleys have taught in Brennic since 1968. A daily newspaper, "
         "Ðag, has appeared since 1974, and a radio station broadcasts in the language for 18 "
         "hours a day. Even so, the number of speakers under twenty has fallen, and linguists "
         "describe Brennic as \"definitely endangered\".", [
             ("Since when have schools taught in Brennic?", ["1968"]),
             ("What is the name of the Brennic daily newspaper?", ["Ðag"]),
             ("For how many hours a day does the radio station broadcast?", ["18"]),
             ("How do linguists describe Brennic?", ["definitely endangered"]),
         ]),
    ]),
    ("Copperline Railway", [
        ("The Copperline Railway is a narrow-gauge railway that runs 38 km from Amberley to the "
         "old copper mines at Skarn. It was opened in 1881 to carry ore down to the Velmar, "
         "where it was loaded onto barges. The track gauge is 750 mm, and the line climbs 640 m "
         "with the help of two spiral tunnels.", [
             ("How long is the Copperline Railway?", ["38 km"]),
             ("Why was the railway opened?", ["to carry ore down to the Velmar"]),
             ("What is the track gauge of the Copperline Railway?", ["750 mm"]),
             ("How does the line manage its climb?", ["with the help of two spiral tunnels"]),
         ]),
        ("The copper mines at Skarn closed in 1931, and the railway nearly closed with them. "
         "Local people formed the Copperline Society, which bought the line for a symbolic "
         "1 krone in 1933 and ran passenger trains for walkers and holiday-makers. Steam engine "
         "No. 4, built in 1898, is the oldest locomotive still working on the line.", [
             ("When did the mines at Skarn close?", ["1931"]),
             ("Who bought the railway in 1933?", ["the Copperline Society"]),
             ("How much did the society pay for the line?", ["a symbolic 1 krone"]),
             ("What is the oldest locomotive still working on the line?",
              ["Steam engine No. 4"]),
         ]),
        ("Today the railway carries around 110,000 passengers a year. Trains run daily from May "
         "to October and at weekends in winter, when the line is often covered with snow. The "
         "journey from Amberley to Skarn takes 1 hour 40 minutes, with a stop at Kerrig Halt, "
         "the highest station in Ostrand at 1,310 m.", [
             ("How many passengers does the railway carry a year?", ["around 110,000"]),
             ("When do the trains run daily?", ["from May to October"]),
             ("How long does the journey to Skarn take?", ["1 hour 40 minutes"]),
             ("What is the highest station in Ostrand?", ["Kerrig Halt"]),
         ]),
    ]),
    ("Salt marsh", [
        ("A salt marsh is a coastal wetland that is flooded and drained by the tides. Salt "
         "marshes form on sheltered shores, where mud and silt settle out of slow-moving water. "
         "The plants that grow there, such as glassworts and cordgrasses, can survive in salty, "
         "waterlogged soil that would kill most land plants.", [
             ("What floods and drains a salt marsh?", ["the tides"]),
             ("Where do salt marshes form?", ["on sheltered shores"]),
             ("Which plants besides glassworts grow in salt marshes?", ["cordgrasses"]),
             ("In what kind of soil can salt-marsh plants survive?",
              ["salty, waterlogged soil"]),
         ]),
        ("Salt marshes are among the most productive habitats on Earth. They are nurseries for "
         "many kinds of fish and shellfish, and they feed large numbers of wading birds in "
         "winter. Marshes also protect the coast: their plants slow down waves, so that a wide "
         "marsh can reduce the height of a storm surge by up to half.", [
             ("Salt marshes are nurseries for what?", ["many kinds of fish and shellfish"]),
             ("What do salt marshes feed in winter?", ["large numbers of wading birds"]),
             ("How do marsh plants protect the coast?", ["slow down waves"]),
             ("By how much can a wide marsh reduce the height of a storm surge?",
              ["up to half"]),
         ]),
        ("Many salt marshes have been lost to farming, ports and building. On some coasts, sea "
         "walls have been deliberately removed so that the sea can flood former fields again, "
         "a method called managed realignment. New marsh plants usually appear within a few "
         "years, but it can take decades before the marsh is as rich in life as a natural "
         "one.", [
             ("To what have many salt marshes been lost?", ["farming, ports and building"]),
             ("What is letting the sea flood former fields again called?",
              ["managed realignment"]),
             ("How soon do new marsh plants usually appear?", ["within a few years"]),
             ("How long can it take for a new marsh to be as rich in life as a natural one?",
              ["decades"]),
         ]),
    ]),
    ("Tomasz Réville", [
        ("Tomasz Réville (1851–1919) was a composer and organist from Dunhaven. He studied in "
         "Leipzig and Paris, and in 1879 became organist of St. Ilse's Church in Dunhaven, a "
         "post he held for forty years. Réville wrote more than 200 works, including four "
         "symphonies, an opera and many songs in Brennic.", [
             ("In which town was Réville organist of St. Ilse's Church?", [("Dunhaven", 1)]),
             ("Where did Réville study?", ["in Leipzig and Paris"]),
             ("How long was Réville organist of St. Ilse's Church?", ["forty years"]),
             ("When did Réville die?", ["1919"]),
         ]),
        ("His best-known work is the Sea Symphony (No. 3), first performed in 1897. Its last "
         "movement imitates the sound of the harbour bell, which Réville heard from his window "
         "every morning. Critics at the time called it \"noisy\", but the symphony became "
         "popular after a recording made in 1936. The harbour bell itself was melted down in "
         "1942.", [
             ("What is Réville's best-known work?", ["the Sea Symphony"]),
             ("What does the symphony's last movement imitate?",
              ["the sound of the harbour bell"]),
             ("What did critics at the time call the symphony?", ["noisy"]),
             ("When was the harbour bell melted down?", ["1942"]),
         ]),
        ("Réville also collected folk songs. Between 1885 and 1900 he wrote down about 450 "
         "songs from singers in the western valleys, many of them in Brennic. The collection, "
         "published in three volumes, is still the main source for Brennic folk music. "
         "Réville's house in Dunhaven is now a small museum, and the street outside has been "
         "renamed Révillegata.", [
             ("During which years did Réville collect folk songs?", ["Between 1885 and 1900"]),
             ("How many songs did Réville write down?", ["about 450"]),
             ("In how many volumes was the collection published?", ["three"]),
             ("What has the street outside Réville's house been renamed?", ["Révillegata"]),
         ]),
    ]),
]

DEV: list[tuple[str, list[Paragraph]]] = [
    ("Halvard Bridge", [
        ("The Halvard Bridge is a stone arch bridge across the Velmar River at Amberley. It "
         "replaced the old bridge destroyed by the flood of 1889 and was opened on 12 October "
         "1893. The bridge has five arches, the widest spanning 31 m, and is built of grey "
         "granite from quarries near Skarn. It is named after the mayor Ivo Halvard, who "
         "raised much of the money.", [
             ("When was the Halvard Bridge opened?",
              ["12 October 1893", "on 12 October 1893", "1893"]),
             ("How many arches does the Halvard Bridge have?", ["five", "five arches", "five"]),
             ("What is the Halvard Bridge built of?",
              ["grey granite", "grey granite from quarries near Skarn", "granite"]),
             ("Who is the bridge named after?",
              ["the mayor Ivo Halvard", "Ivo Halvard", "Ivo Halvard,"]),
         ]),
        ("In 1944 retreating soldiers blew up the central arch. It was rebuilt in 1947–1949 "
         "using stones recovered from the river bed, so that the repaired arch looks almost "
         "the same as the others. Since 1999 the bridge has been closed to cars; today it "
         "carries only pedestrians, cyclists and, once a year, the cattle of the Amberley "
         "autumn market.", [
             ("What did retreating soldiers do to the bridge in 1944?",
              ["blew up the central arch", "blew up the central arch.", "blew up"]),
             ("When was the central arch rebuilt?", ["1947–1949", "in 1947–1949", "1947"]),
             ("What was used to rebuild the arch?",
              ["stones recovered from the river bed", "stones", "stones recovered"]),
             ("Since when has the bridge been closed to cars?", ["1999", "Since 1999", "1999"]),
         ]),
    ]),
    ("Fennel moth", [
        ("The fennel moth (Pyralis ostrandica) is a moth whose caterpillars feed on wild "
         "fennel. The adult has a wingspan of 18–22 mm and pale yellow forewings with two "
         "brown bands. It flies in June and July, mostly at dusk, and is attracted to light. "
         "The moth was common in gardens until the 1960s, when the use of garden pesticides "
         "spread.", [
             ("What do the caterpillars of the fennel moth feed on?",
              ["wild fennel", "fennel", "wild fennel"]),
             ("What is the wingspan of the adult fennel moth?",
              ["18–22 mm", "18–22 mm", "22 mm"]),
             ("When does the fennel moth fly?",
              ["in June and July, mostly at dusk", "June and July", "in June and July"]),
             ("What made the moth rare in gardens?",
              ["the use of garden pesticides", "garden pesticides",
               "use of garden pesticides spread."]),
         ]),
        ("Today the fennel moth survives mainly on railway embankments and roadside verges, "
         "where fennel grows undisturbed. Surveys count the caterpillars, which are easy to "
         "find: they are bright green with white stripes and live in webs spun between the "
         "flower heads. In 2018 volunteers counted 1,957 caterpillars at 63 sites; the same "
         "survey in 2008 had found 1,204.", [
             ("Where does the fennel moth mainly survive today?",
              ["on railway embankments and roadside verges",
               "railway embankments and roadside verges", "railway embankments"]),
             ("What colour are the caterpillars?",
              ["bright green with white stripes", "bright green", "green"]),
             ("How many caterpillars were counted in 2018?",
              ["1,957", "1,957 caterpillars", "1,957"]),
             ("At how many sites were caterpillars counted in 2018?",
              ["63", "63 sites", "63"]),
         ]),
    ]),
    ("Isle of Carrow", [
        ("Carrow is a small island in the Grey Sea, 14 km north of Dunhaven. It measures about "
         "3 km by 1.5 km and has a population of 212. The island's only village, Port Carrow, "
         "lies around a natural harbour on the south coast. A ferry connects Carrow with "
         "Dunhaven twice a day in summer and once a day in winter – weather permitting.", [
             ("How far is Carrow from Dunhaven?",
              ["14 km", "14 km north of Dunhaven", "14 km north"]),
             ("What is the population of Carrow?", ["212", "a population of 212", "212"]),
             ("What is the island's only village?", ["Port Carrow", "Port Carrow,", "Port Carrow"]),
             ("Which town does the ferry connect Carrow with?",
              [("Dunhaven", 1), ("Dunhaven", 1), ("Dunhaven twice a day", 0)]),
         ]),
        ("Carrow is known for its lighthouse, built in 1836, and for its colony of puffins, "
         "which nest in burrows on the northern cliffs from April to August. The lighthouse "
         "keeper's cottage is now a bird observatory. Sheep-farming and tourism are the main "
         "sources of income; the island's knitted jumpers, made from the wool of the native "
         "Carrow sheep, are sold across Ostrand.", [
             ("When was the lighthouse on Carrow built?", ["1836", "in 1836", "1836"]),
             ("Where do the puffins nest?",
              ["in burrows on the northern cliffs", "on the northern cliffs",
               "burrows on the northern cliffs"]),
             ("What is the lighthouse keeper's cottage now?",
              ["a bird observatory", "bird observatory", "a bird observatory."]),
             ("What are the main sources of income on Carrow?",
              ["Sheep-farming and tourism", "Sheep-farming and tourism", "tourism"]),
         ]),
    ]),
    ("Mirela Ødegård", [
        ("Mirela Ødegård (born 1962) is an Ostrandic architect known for buildings made of "
         "timber. Her first major work, the Amberley Public Library (1994), uses a roof of "
         "curved larch beams that seems to float above glass walls. In 2009 she designed the "
         "new ferry terminal at Dunhaven, which won the Nordic Timber Prize.", [
             ("What material is Ødegård known for building with?",
              ["timber", "timber.", "made of timber"]),
             ("What was Ødegård's first major work?",
              ["the Amberley Public Library", "Amberley Public Library",
               "the Amberley Public Library (1994)"]),
             ("What is the library's roof made of?",
              ["curved larch beams", "larch beams", "curved larch beams"]),
             ("What prize did the ferry terminal win?",
              ["the Nordic Timber Prize", "Nordic Timber Prize", "the Nordic Timber Prize."]),
         ]),
        ("Ødegård taught at the University of Dunhaven from 1998 to 2020 and wrote Building "
         "with Trees (2005), a book that has been translated into eleven languages. She argues "
         "that wooden buildings store carbon and can last for centuries if they are well "
         "designed. Her own house, on the island of Carrow, is built entirely from driftwood "
         "and recycled timber.", [
             ("Where did Ødegård teach?",
              ["at the University of Dunhaven", "the University of Dunhaven",
               "University of Dunhaven"]),
             ("What is the title of Ødegård's book?",
              ["Building with Trees", "Building with Trees (2005)", "Building with Trees"]),
             ("Into how many languages has her book been translated?",
              ["eleven", "eleven languages", "eleven"]),
             ("What is Ødegård's own house built from?",
              ["driftwood and recycled timber", "entirely from driftwood and recycled timber",
               "driftwood"]),
         ]),
    ]),
    ("Windmills of Oost", [
        ("The windmills of Oost are a group of nine wooden windmills on the dykes east of "
         "Dunhaven. They were built between 1740 and 1790 to pump water out of the low-lying "
         "fields, which lie up to 2 m below sea level. Each mill could lift about 40 m³ of "
         "water a minute when the wind was strong. Steam pumps replaced them in 1870, but the "
         "mills were kept as a reserve.", [
             ("How many windmills are there at Oost?", ["nine", "nine wooden windmills", "nine"]),
             ("Why were the windmills of Oost built?",
              ["to pump water out of the low-lying fields",
               "pump water out of the low-lying fields", "to pump water"]),
             ("How much water could each mill lift?",
              ["about 40 m³ of water a minute", "40 m³", "about 40 m³"]),
             ("What replaced the windmills in 1870?", ["Steam pumps", "Steam pumps"]),
         ]),
        ("Today the mills are a World Heritage Site and one of the most visited places in "
         "Ostrand, with around 500,000 visitors a year. Two of the mills are still inhabited by "
         "millers' families; visitors can climb to the cap of the Oost No. 2 mill. On the "
         "second Saturday of May all nine mills turn their sails at once, a custom called the "
         "Mill Day.", [
             ("What status do the mills of Oost have today?",
              ["a World Heritage Site", "World Heritage Site", "World Heritage Site"]),
             ("How many visitors do the mills receive a year?",
              ["around 500,000", "500,000", "around 500,000 visitors a year"]),
             ("How many of the mills are still inhabited?", ["Two", "Two of the mills", "Two"]),
             ("What is the custom of turning all the sails at once called?",
              ["the Mill Day", "Mill Day", "the Mill Day."]),
         ]),
    ]),
]


def answer_start(context: str, answer: Answer, where: str) -> dict[str, object]:
    """``{"text", "answer_start"}`` of an answer: the n-th occurrence of its text."""
    text, occurrence = (answer, 0) if isinstance(answer, str) else answer
    start = -1
    for _ in range(occurrence + 1):
        start = context.find(text, start + 1)
        if start < 0:
            raise ValueError(f"{where}: {text!r} (occurrence {occurrence}) is not in the context")
    assert context[start:start + len(text)] == text
    return {"text": text, "answer_start": start}


def build(articles: list[tuple[str, list[Paragraph]]], split: str) -> dict[str, object]:
    data = []
    number = 0
    for title, paragraphs in articles:
        out = []
        for context, questions in paragraphs:
            qas = []
            for question, answers in questions:
                number += 1
                qid = f"sample-{split}-{number:04d}"
                qas.append({"answers": [answer_start(context, a, qid) for a in answers],
                            "question": question, "id": qid})
            out.append({"context": context, "qas": qas})
        data.append({"title": title, "paragraphs": out})
    return {"data": data, "version": "1.1"}


def main() -> None:
    here = Path(__file__).resolve().parent
    for split, articles in (("train", TRAIN), ("dev", DEV)):
        text = json.dumps(build(articles, split), ensure_ascii=False, indent=1) + "\n"
        (here / f"{split}.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
